import { useMutation } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { KeyExpiry } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { type FormEvent, useState } from "react";
import { CopyButton } from "../../components/CopyButton";
import { Dialog, DialogActions, type DialogProps, ErrorNotice } from "../../components/Dialog";
import { Field, FieldSet } from "../../components/Field";
import { TextField } from "../../components/Inputs";
import { useInvalidate } from "../../components/useInvalidate";

const expiries = [
  { value: KeyExpiry.DAYS_30, label: "30 days" },
  { value: KeyExpiry.DAYS_90, label: "90 days" },
  { value: KeyExpiry.YEAR_1, label: "1 year" },
  { value: KeyExpiry.NEVER, label: "Never" },
];

/** A new key's name and expiry, then its secret, this once. */
export function CreateKeyDialog({ projectId, open, onClose }: DialogProps & { projectId: string }) {
  const invalidate = useInvalidate();
  const create = useMutation(ConsoleService.method.createApiKey);
  const [name, setName] = useState("");
  const [expiry, setExpiry] = useState(KeyExpiry.DAYS_90);
  // The secret lives only in this dialog's state: gone when it closes, never cached or stored.
  const [secret, setSecret] = useState<string>();

  const close = () => {
    setSecret(undefined);
    setName("");
    setExpiry(KeyExpiry.DAYS_90);
    create.reset();
    onClose();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(
      { projectId, name, expiry },
      {
        onSuccess: (answer) => {
          setSecret(answer.secret);
          void invalidate(ConsoleService.method.listApiKeys);
        },
      },
    );
  };

  return (
    <Dialog title={secret ? "Copy your new API key" : "Create API key"} open={open} onClose={close}>
      {secret ? (
        <div className="stack">
          <p className="notice notice-warning" role="alert">
            Copy this key now. It cannot be shown again.
          </p>
          <Field label="Secret key">
            {(control) => (
              <div className="secret-row">
                {/* Wrapped, never scrolled: the whole key shows, its trk_ start included, at any width. */}
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
            It acts for you, with your rights in this project. Store it in your pipeline's secrets.
          </p>
          <div className="dialog-actions">
            <button type="button" className="button button-primary" onClick={close}>
              Done
            </button>
          </div>
        </div>
      ) : (
        <form className="stack" onSubmit={submit}>
          <TextField
            label="Name"
            required
            hint="Say where the key is used, e.g. “GitHub Actions – deploy.yml”."
            maxLength={100}
            value={name}
            onChange={setName}
            autoFocus
          />
          <FieldSet legend="Expires after">
            <div className="choices">
              {expiries.map((choice) => (
                <label key={choice.value} className="choice">
                  <input
                    type="radio"
                    name="expiry"
                    checked={expiry === choice.value}
                    onChange={() => setExpiry(choice.value)}
                  />
                  {choice.label}
                  {choice.value === KeyExpiry.DAYS_90 && <span className="muted"> (default)</span>}
                </label>
              ))}
            </div>
          </FieldSet>
          <ErrorNotice error={create.error} />
          <DialogActions onCancel={close} label="Create key" busyLabel="Creating…" busy={create.isPending} />
        </form>
      )}
    </Dialog>
  );
}
