// A project's variables, by name only: values are write-only. Editors and above create them, set
// a new value, and delete them after seeing which test cases name them (docs/console.md,
// "Authoring"). A variable an import created has no value yet: it is marked, and listed on top.
import { useQuery } from "@connectrpc/connect-query";
import type { Variable } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { isNotFound } from "../../api";
import { DataTable } from "../../components/DataTable";
import { DoneNotice, RowAction, useListPage } from "../../components/ListPage";
import { Empty, NotFound, QueryView } from "../../components/States";
import { Badge } from "../../components/Status";
import { Time } from "../../components/Time";
import { useProject } from "../../project";
import { CreateVariableDialog } from "./CreateVariableDialog";
import { DeleteVariableDialog } from "./DeleteVariableDialog";
import { SetValueDialog } from "./SetValueDialog";
import { Unset } from "./Unset";

type Editing =
  | { kind: "create" }
  | { kind: "set"; variable: Variable }
  | { kind: "delete"; variable: Variable };

export function Variables() {
  const { projectId, project, editor, name } = useProject();
  const variables = useQuery(ConsoleService.method.listVariables, { projectId });
  const { editing, open, close, done, say } = useListPage<Editing>();
  if (isNotFound(project.error) || isNotFound(variables.error)) return <NotFound what="Project" />;
  return (
    <>
      <p className="eyebrow">{name}</p>
      <div className="page-head">
        <h1>Variables</h1>
        {editor && (
          <button type="button" className="button button-primary" onClick={() => open({ kind: "create" })}>
            New variable
          </button>
        )}
      </div>
      <p className="lead">
        Secrets the steps use as <code>{"{{NAME}}"}</code>. Values are write-only: nobody can read them back,
        here or through the API, and run summaries show the name instead.
      </p>
      {project.data && !editor && (
        <p className="notice notice-info">Viewers see the names; Editors and above set new values.</p>
      )}
      <DoneNotice done={done} />
      <QueryView
        query={variables}
        what="variables"
        isEmpty={(data) => data.variables.length === 0}
        empty={
          <Empty title="No variables yet.">
            <p>
              {editor
                ? "Create one for each secret your steps send: a password, a token."
                : "An Editor creates them."}
            </p>
          </Empty>
        }
      >
        {(data) => (
          <>
            <Unset variables={data.variables} editor={editor} />
            <DataTable
              rows={data.variables}
              columns={[
                { label: "Name", className: "cell-strong", cell: (variable) => <code>{variable.name}</code> },
                {
                  label: "Value",
                  cell: (variable) =>
                    variable.hasValue ? (
                      <span className="muted">hidden</span>
                    ) : (
                      <Badge tone="bad">Not set</Badge>
                    ),
                },
                {
                  label: "Changed",
                  cell: (variable) => <Time at={variable.updatedAt ?? variable.createdAt} />,
                },
              ]}
              actions={
                editor
                  ? (variable) => (
                      <div className="row-actions">
                        <button
                          type="button"
                          className={`button button-small${variable.hasValue ? "" : " button-primary"}`}
                          aria-label={`${variable.hasValue ? "Set new value" : "Set value"} of ${variable.name}`}
                          onClick={() => open({ kind: "set", variable })}
                        >
                          {variable.hasValue ? "Set new value" : "Set value"}
                        </button>
                        <RowAction
                          action="Delete"
                          item={variable.name}
                          danger
                          onClick={() => open({ kind: "delete", variable })}
                        />
                      </div>
                    )
                  : undefined
              }
            />
          </>
        )}
      </QueryView>
      <SetValueDialog
        projectId={projectId}
        variable={editing?.kind === "set" ? editing.variable : undefined}
        onClose={close}
        onSaved={(variableName, first) =>
          say(`${first ? "Value" : "New value"} of ${variableName} saved. Runs started from now on use it.`)
        }
      />
      {editing?.kind === "create" && (
        <CreateVariableDialog
          projectId={projectId}
          onClose={close}
          onCreated={(variableName) => say(`${variableName} created. Steps use it as {{${variableName}}}.`)}
        />
      )}
      {editing?.kind === "delete" && (
        <DeleteVariableDialog
          projectId={projectId}
          variable={editing.variable}
          onClose={close}
          onDeleted={(variableName) => say(`${variableName} deleted.`)}
        />
      )}
    </>
  );
}
