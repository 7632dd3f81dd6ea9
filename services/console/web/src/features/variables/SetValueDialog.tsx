import { useMutation } from "@connectrpc/connect-query";
import type { Variable } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useState } from "react";
import { Dialog, DialogActions, ErrorNotice } from "../../components/Dialog";
import { CodeField } from "../../components/Inputs";
import { useInvalidate } from "../../components/useInvalidate";
import { valueHint } from "./names";

/** A variable's first or a new value (open while `variable` is set). */
export function SetValueDialog({
  projectId,
  variable,
  onClose,
  onSaved,
}: {
  projectId: string;
  variable: Variable | undefined;
  onClose: () => void;
  /** `first`: the variable had no value before. */
  onSaved: (name: string, first: boolean) => void;
}) {
  const invalidate = useInvalidate();
  const set = useMutation(ConsoleService.method.setVariableValue);
  // The value lives only in this dialog's state: emptied when it closes, never cached.
  const [value, setValue] = useState("");
  const close = () => {
    setValue("");
    set.reset();
    onClose();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!variable) return;
    set.mutate(
      { projectId, variableId: variable.id, value },
      {
        onSuccess: () => {
          void invalidate(ConsoleService.method.listVariables);
          onSaved(variable.name, !variable.hasValue);
          close();
        },
      },
    );
  };
  const first = variable !== undefined && !variable.hasValue;
  return (
    <Dialog
      title={`${first ? "Value" : "New value"} of ${variable?.name ?? "variable"}`}
      open={variable !== undefined}
      onClose={close}
    >
      <form className="stack" onSubmit={submit} autoComplete="off">
        <CodeField
          label={first ? "Value" : "New value"}
          required
          hint={
            first
              ? `${variable.name} has no value yet. ${valueHint}`
              : "Replaces the current value, which is not shown. Once saved, this value cannot be read back either."
          }
          type="password"
          autoFocus
          autoComplete="new-password"
          value={value}
          onChange={setValue}
        />
        <ErrorNotice error={set.error} />
        <DialogActions onCancel={close} label="Save value" busyLabel="Saving…" busy={set.isPending} />
      </form>
    </Dialog>
  );
}
