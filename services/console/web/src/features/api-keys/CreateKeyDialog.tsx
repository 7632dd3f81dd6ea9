import { useMutation } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { KeyExpiry, KeyKind } from "@testrun/gen/testrun/keys/v1/keys_pb";
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

/** What the dialog says of each kind: an API key, or a content token (import only). */
const wording = {
  [KeyKind.API_KEY]: {
    noun: "API key",
    create: "Create API key",
    copy: "Copy your new API key",
    label: "Create key",
    hint: "Say where the key is used, e.g. “GitHub Actions – deploy.yml”.",
    acts: "It acts for you, with your rights in this project. Store it in your pipeline's secrets.",
  },
  [KeyKind.CONTENT_TOKEN]: {
    noun: "content token",
    create: "Create content token",
    copy: "Copy your new content token",
    label: "Create token",
    hint: "Say where the specs are pushed from, e.g. “GitHub Actions – push-specs.yml”.",
    acts: "It only imports this project's content (testrun push), as you: it stops working if you stop being an Editor. Store it in your pipeline's secrets as TESTRUN_CONTENT_TOKEN.",
  },
};

/** A new key's (or content token's) name and expiry, then its secret, this once. */
export function CreateKeyDialog({
  projectId,
  open,
  onClose,
  kind = KeyKind.API_KEY,
}: DialogProps & { projectId: string; kind?: KeyKind.API_KEY | KeyKind.CONTENT_TOKEN }) {
  const words = wording[kind];
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
      { projectId, name, expiry, kind },
      {
        onSuccess: (answer) => {
          setSecret(answer.secret);
          void invalidate(ConsoleService.method.listApiKeys);
        },
      },
    );
  };

  return (
    <Dialog title={secret ? words.copy : words.create} open={open} onClose={close}>
      {secret ? (
        <div className="stack">
          <p className="notice notice-warning" role="alert">
            Copy this {words.noun} now. It cannot be shown again.
          </p>
          <Field label={kind === KeyKind.CONTENT_TOKEN ? "Secret token" : "Secret key"}>
            {(control) => (
              <div className="secret-row">
                {/* Wrapped, never scrolled: the whole key shows, its trk_ or trc_ start included, at any width. */}
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
          <p className="muted">{words.acts}</p>
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
            hint={words.hint}
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
          <DialogActions onCancel={close} label={words.label} busyLabel="Creating…" busy={create.isPending} />
        </form>
      )}
    </Dialog>
  );
}
