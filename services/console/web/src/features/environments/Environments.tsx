// A project's environments: the systems under test, each a base URL; the default one marked.
// Editors and above create, edit and delete them and choose the default; the catalog validates
// (docs/console.md, "Authoring").
import { useMutation, useQuery } from "@connectrpc/connect-query";
import type { Environment } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { isNotFound } from "../../api";
import { DataTable } from "../../components/DataTable";
import { ErrorNotice } from "../../components/Dialog";
import { DeleteDialog, DoneNotice, RowAction, useListPage } from "../../components/ListPage";
import { Empty, NotFound, QueryView } from "../../components/States";
import { Badge } from "../../components/Status";
import { Time } from "../../components/Time";
import { useInvalidate } from "../../components/useInvalidate";
import { useProject } from "../../project";
import { EnvironmentDialog } from "./EnvironmentDialog";

/** What a dialog is open for: a new environment, editing one, deleting one. */
type Editing =
  | { kind: "create" }
  | { kind: "edit"; environment: Environment }
  | { kind: "delete"; environment: Environment };

export function Environments() {
  const { projectId, project, name, editor } = useProject();
  const environments = useQuery(ConsoleService.method.listEnvironments, { projectId });
  const invalidate = useInvalidate();
  const makeDefault = useMutation(ConsoleService.method.updateEnvironment);
  const {
    editing,
    open,
    close,
    done,
    say: setDone,
  } = useListPage<Editing>({ onOpen: () => makeDefault.reset() });
  if (isNotFound(project.error) || isNotFound(environments.error)) return <NotFound what="Project" />;
  const chooseDefault = (environment: Environment) => {
    setDone(undefined);
    makeDefault.mutate(
      { projectId, environmentId: environment.id, isDefault: true },
      {
        onSuccess: async () => {
          await invalidate(ConsoleService.method.listEnvironments);
          setDone(`${environment.name} is now the default environment.`);
        },
      },
    );
  };
  return (
    <>
      <p className="eyebrow">{name}</p>
      <div className="page-head">
        <h1>Environments</h1>
        {editor && (
          <button type="button" className="button button-primary" onClick={() => open({ kind: "create" })}>
            New environment
          </button>
        )}
      </div>
      <p className="lead">
        Where runs send their requests: each step's path is appended to the environment's base URL. A run
        without a chosen environment uses the default.
      </p>
      {project.data && !editor && (
        <p className="notice notice-info">Viewers see the environments; Editors and above change them.</p>
      )}
      <DoneNotice done={done} />
      <ErrorNotice error={makeDefault.error} />
      <QueryView
        query={environments}
        what="environments"
        isEmpty={(data) => data.environments.length === 0}
        empty={
          <Empty title="No environments yet.">
            <p>
              {editor
                ? "Create one for each system your tests run against, e.g. staging and production."
                : "An Editor creates them."}
            </p>
          </Empty>
        }
      >
        {(data) => (
          <DataTable
            rows={data.environments}
            columns={[
              {
                label: "Name",
                className: "cell-strong",
                cell: (env) => (
                  <>
                    {env.name} {env.isDefault && <Badge tone="active">Default</Badge>}
                  </>
                ),
              },
              { label: "Base URL", cell: (env) => <code className="break">{env.baseUrl}</code> },
              { label: "Changed", cell: (env) => <Time at={env.updatedAt ?? env.createdAt} /> },
            ]}
            actions={
              editor
                ? (env) => (
                    <div className="row-actions">
                      {!env.isDefault && (
                        <button
                          type="button"
                          className="button button-small"
                          aria-label={`Make ${env.name} the default`}
                          disabled={makeDefault.isPending}
                          onClick={() => chooseDefault(env)}
                        >
                          Make default
                        </button>
                      )}
                      <RowAction
                        action="Edit"
                        item={env.name}
                        onClick={() => open({ kind: "edit", environment: env })}
                      />
                      <RowAction
                        action="Delete"
                        item={env.name}
                        danger
                        onClick={() => open({ kind: "delete", environment: env })}
                      />
                    </div>
                  )
                : undefined
            }
          />
        )}
      </QueryView>
      {(editing?.kind === "create" || editing?.kind === "edit") && (
        <EnvironmentDialog
          projectId={projectId}
          environment={editing.kind === "edit" ? editing.environment : undefined}
          first={environments.data?.environments.length === 0}
          onClose={close}
          onSaved={setDone}
        />
      )}
      <DeleteDialog
        method={ConsoleService.method.deleteEnvironment}
        item={editing?.kind === "delete" ? editing.environment : undefined}
        request={(environment) => ({ projectId, environmentId: environment.id })}
        invalidates={[ConsoleService.method.listEnvironments]}
        title={(environment) => `Delete ${environment.name}?`}
        label="Delete environment"
        deleted={(environment) => `${environment.name} deleted.`}
        onClose={close}
        onDeleted={setDone}
      >
        {(environment) => (
          <>
            <p>
              Runs can no longer be started against <code className="break">{environment.baseUrl}</code>. Runs
              that used it keep their results.
            </p>
            {environment.isDefault && (
              <p className="notice notice-warning">
                It is the default: until you choose another, runs that name no environment use the oldest one.
              </p>
            )}
          </>
        )}
      </DeleteDialog>
    </>
  );
}
