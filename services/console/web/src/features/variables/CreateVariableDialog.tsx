import { useMutation } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useRef, useState } from "react";
import { formErrors } from "../../api";
import { Dialog, DialogActions, ErrorNotice } from "../../components/Dialog";
import { useFocusOnError } from "../../components/Field";
import { CodeField } from "../../components/Inputs";
import { useInvalidate } from "../../components/useInvalidate";
import { namePattern, nameProblem, nameRule, valueHint } from "./names";

/** Name and value; the name's rule shown, and checked as it is typed; the catalog has the last word. */
export function CreateVariableDialog({
  projectId,
  onClose,
  onCreated,
}: {
  projectId: string;
  onClose: () => void;
  onCreated: (name: string) => void;
}) {
  const invalidate = useInvalidate();
  const create = useMutation(ConsoleService.method.createVariable);
  const [name, setName] = useState("");
  // The value lives only in this dialog's state: gone when it closes, never cached.
  const [value, setValue] = useState("");
  const form = useRef<HTMLFormElement>(null);
  useFocusOnError(form, create.error);
  const errors = formErrors(create, { name, value });
  const typedWrong = nameProblem(name);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(
      { projectId, name, value },
      {
        onSuccess: async ({ variable }) => {
          setValue("");
          await invalidate(ConsoleService.method.listVariables);
          onCreated(variable?.name ?? name);
          onClose();
        },
      },
    );
  };
  return (
    <Dialog title="New variable" open onClose={onClose}>
      <form ref={form} className="stack" onSubmit={submit} autoComplete="off" noValidate>
        <CodeField
          label="Name"
          hint={
            <>
              {nameRule} Steps write it as <code>{`{{${namePattern.test(name) ? name : "NAME"}}}`}</code>.
            </>
          }
          error={errors.at("name") ?? typedWrong}
          required
          autoFocus
          maxLength={64}
          value={name}
          onChange={setName}
        />
        <CodeField
          label="Value"
          hint={valueHint}
          error={errors.at("value")}
          required
          type="password"
          autoComplete="new-password"
          value={value}
          onChange={setValue}
        />
        {errors.other && <ErrorNotice error={create.error} />}
        <DialogActions
          onCancel={onClose}
          label="Create variable"
          busyLabel="Creating…"
          busy={create.isPending}
        />
      </form>
    </Dialog>
  );
}
