import { CopyButton } from "../../components/CopyButton";
import { Dialog } from "../../components/Dialog";
import { Field } from "../../components/Field";

/** The signing secret, this once: it lives only in this dialog's state, never cached or stored. */
export function SecretDialog({
  secret,
  rotated,
  slack,
  onClose,
}: {
  secret: string;
  rotated: boolean;
  slack: boolean;
  onClose: () => void;
}) {
  return (
    <Dialog title={rotated ? "Copy the new signing secret" : "Webhook created"} open onClose={onClose}>
      <div className="stack">
        {slack ? (
          <p>Slack messages are not signed: nothing more to set up.</p>
        ) : (
          <>
            <p className="notice notice-warning" role="alert">
              Copy the signing secret now. You will not see it again.
            </p>
            <Field label="Signing secret">
              {(control) => (
                <div className="secret-row">
                  <textarea
                    {...control}
                    className="input input-code secret-value"
                    readOnly
                    autoFocus
                    rows={2}
                    spellCheck={false}
                    value={secret}
                    onFocus={(e) => e.currentTarget.select()}
                  />
                  <CopyButton text={secret} />
                </div>
              )}
            </Field>
            <p className="muted">
              {rotated
                ? "The previous secret still signs every delivery beside this one for 24 hours: switch your receiver to this one before then."
                : "Your receiver checks each delivery's webhook-signature with it (docs: “Webhooks”)."}
            </p>
          </>
        )}
        <div className="dialog-actions">
          <button type="button" className="button button-primary" onClick={onClose}>
            Done
          </button>
        </div>
      </div>
    </Dialog>
  );
}
