// A project's variables, by name only: values are write-only. Editors and above set a new value.
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import type { Variable } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useState } from "react";
import { isNotFound } from "../api";
import { DataTable } from "../components/DataTable";
import { Dialog, DialogActions, ErrorNotice } from "../components/Dialog";
import { Field } from "../components/Field";
import { Empty, NotFound, QueryView } from "../components/States";
import { Time } from "../components/Time";
import { useProject } from "../project";

export function Variables() {
  const { projectId, project, editor, name } = useProject();
  const variables = useQuery(ConsoleService.method.listVariables, { projectId });
  const [setting, setSetting] = useState<Variable>();
  const [saved, setSaved] = useState<string>();
  if (isNotFound(project.error) || isNotFound(variables.error)) return <NotFound what="Project" />;
  return (
    <>
      <p className="eyebrow">{name}</p>
      <h1>Variables</h1>
      <p className="lead">
        Secrets the steps use as <code>{"{{NAME}}"}</code>. Values are write-only: nobody can read them back,
        here or through the API, and run summaries show the name instead.
      </p>
      {project.data && !editor && (
        <p className="notice notice-info">Viewers see the names; Editors and above set new values.</p>
      )}
      {saved && (
        <p className="notice notice-info" role="status">
          New value of {saved} saved. Runs started from now on use it.
        </p>
      )}
      <QueryView
        query={variables}
        what="variables"
        isEmpty={(data) => data.variables.length === 0}
        empty={
          <Empty title="No variables yet.">
            <p>
              An operator creates them with <code>testrunctl var set</code>.
            </p>
          </Empty>
        }
      >
        {(data) => (
          <DataTable
            rows={data.variables}
            columns={[
              { label: "Name", className: "cell-strong", cell: (variable) => <code>{variable.name}</code> },
              { label: "Value", className: "muted", cell: () => "hidden" },
              {
                label: "Changed",
                cell: (variable) => <Time at={variable.updatedAt ?? variable.createdAt} />,
              },
            ]}
            actions={
              editor
                ? (variable) => (
                    <button
                      type="button"
                      className="button button-small"
                      aria-label={`Set new value of ${variable.name}`}
                      onClick={() => {
                        setSaved(undefined);
                        setSetting(variable);
                      }}
                    >
                      Set new value
                    </button>
                  )
                : undefined
            }
          />
        )}
      </QueryView>
      <SetValueDialog
        projectId={projectId}
        variable={setting}
        onClose={() => setSetting(undefined)}
        onSaved={(variableName) => setSaved(variableName)}
      />
    </>
  );
}

function SetValueDialog({
  projectId,
  variable,
  onClose,
  onSaved,
}: {
  projectId: string;
  variable: Variable | undefined;
  onClose: () => void;
  onSaved: (name: string) => void;
}) {
  const queryClient = useQueryClient();
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
          void queryClient.invalidateQueries();
          onSaved(variable.name);
          close();
        },
      },
    );
  };
  return (
    <Dialog
      title={`New value of ${variable?.name ?? "variable"}`}
      open={variable !== undefined}
      onClose={close}
    >
      <form className="stack" onSubmit={submit} autoComplete="off">
        <Field
          label="New value"
          required
          hint="Replaces the current value, which is not shown. Once saved, this value cannot be read back either."
        >
          {(control) => (
            <input
              {...control}
              className="input input-code"
              type="password"
              autoFocus
              autoComplete="new-password"
              spellCheck={false}
              value={value}
              onChange={(e) => setValue(e.target.value)}
            />
          )}
        </Field>
        <ErrorNotice error={set.error} />
        <DialogActions onCancel={close} label="Save value" busyLabel="Saving…" busy={set.isPending} />
      </form>
    </Dialog>
  );
}
