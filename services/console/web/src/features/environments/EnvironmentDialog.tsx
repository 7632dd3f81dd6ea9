import { useMutation } from "@connectrpc/connect-query";
import type { Environment } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useRef, useState } from "react";
import { formErrors } from "../../api";
import { Dialog, DialogActions, ErrorNotice } from "../../components/Dialog";
import { useFocusOnError } from "../../components/Field";
import { CodeField, TextField } from "../../components/Inputs";
import { useInvalidate } from "../../components/useInvalidate";

/** New environment, or editing one: name, base URL, default. Errors at their fields. */
export function EnvironmentDialog({
  projectId,
  environment,
  first,
  onClose,
  onSaved,
}: {
  projectId: string;
  /** The one edited; undefined for a new one. */
  environment: Environment | undefined;
  /** The project has none yet: the new one is the default unless unticked. */
  first: boolean;
  onClose: () => void;
  onSaved: (message: string) => void;
}) {
  const invalidate = useInvalidate();
  const create = useMutation(ConsoleService.method.createEnvironment);
  const update = useMutation(ConsoleService.method.updateEnvironment);
  const save = environment ? update : create;
  const [name, setName] = useState(environment?.name ?? "");
  const [baseUrl, setBaseUrl] = useState(environment?.baseUrl ?? "");
  const [isDefault, setIsDefault] = useState(environment?.isDefault ?? first);
  const form = useRef<HTMLFormElement>(null);
  useFocusOnError(form, save.error);
  const errors = formErrors(save, { name, base_url: baseUrl });
  const done = async (saved: Environment | undefined) => {
    await invalidate(ConsoleService.method.listEnvironments);
    onSaved(environment ? `${saved?.name ?? name} saved.` : `${saved?.name ?? name} created.`);
    onClose();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (environment)
      update.mutate(
        { projectId, environmentId: environment.id, name, baseUrl, isDefault },
        { onSuccess: (answer) => done(answer.environment) },
      );
    else
      create.mutate(
        { projectId, name, baseUrl, isDefault },
        { onSuccess: (answer) => done(answer.environment) },
      );
  };
  return (
    <Dialog title={environment ? `Edit ${environment.name}` : "New environment"} open onClose={onClose}>
      <form ref={form} className="stack" onSubmit={submit} noValidate>
        <TextField
          label="Name"
          hint="E.g. staging. At most 200 characters."
          error={errors.at("name")}
          required
          autoFocus
          value={name}
          onChange={setName}
        />
        <CodeField
          label="Base URL"
          hint={
            <>
              An absolute <code>http://</code> or <code>https://</code> address without query or fragment,
              e.g. <code>https://staging.example.com/api</code>. No user name or password: keep credentials in
              variables and send them in a step's headers.
            </>
          }
          error={errors.at("base_url")}
          required
          inputMode="url"
          value={baseUrl}
          onChange={setBaseUrl}
        />
        <label className="checkbox-field">
          <input type="checkbox" checked={isDefault} onChange={(e) => setIsDefault(e.target.checked)} />
          <span>
            <strong>Default environment</strong>
            <br />
            <span className="muted small">
              Runs that name no environment use it; the previous default stops being it.
            </span>
          </span>
        </label>
        {errors.other && <ErrorNotice error={save.error} />}
        <DialogActions
          onCancel={onClose}
          label={environment ? "Save" : "Create environment"}
          busyLabel="Saving…"
          busy={save.isPending}
        />
      </form>
    </Dialog>
  );
}
