// A project's environments: the systems under test, each a base URL; the default one marked.
// Editors and above create, edit and delete them and choose the default; the catalog validates
// (docs/console.md, "Authoring").
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import type { Environment } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useRef, useState } from "react";
import { formErrors, isNotFound } from "../api";
import { DataTable } from "../components/DataTable";
import { Dialog, DialogActions, ErrorNotice } from "../components/Dialog";
import { Field, useFocusOnError } from "../components/Field";
import { Empty, NotFound, QueryView } from "../components/States";
import { Badge } from "../components/Status";
import { Time } from "../components/Time";
import { useProject } from "../project";

/** What a dialog is open for: a new environment, editing one, deleting one. */
type Editing =
  | { kind: "create" }
  | { kind: "edit"; environment: Environment }
  | { kind: "delete"; environment: Environment };

export function Environments() {
  const { projectId, project, name, editor } = useProject();
  const environments = useQuery(ConsoleService.method.listEnvironments, { projectId });
  const [editing, setEditing] = useState<Editing>();
  const [done, setDone] = useState<string>();
  const queryClient = useQueryClient();
  const makeDefault = useMutation(ConsoleService.method.updateEnvironment);
  if (isNotFound(project.error) || isNotFound(environments.error)) return <NotFound what="Project" />;
  const open = (next: Editing) => {
    setDone(undefined);
    makeDefault.reset();
    setEditing(next);
  };
  const chooseDefault = (environment: Environment) => {
    setDone(undefined);
    makeDefault.mutate(
      { projectId, environmentId: environment.id, isDefault: true },
      {
        onSuccess: async () => {
          await queryClient.invalidateQueries();
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
      {done && (
        <p className="notice notice-info" role="status">
          {done}
        </p>
      )}
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
                      <button
                        type="button"
                        className="button button-small"
                        aria-label={`Edit ${env.name}`}
                        onClick={() => open({ kind: "edit", environment: env })}
                      >
                        Edit
                      </button>
                      <button
                        type="button"
                        className="button button-small button-danger"
                        aria-label={`Delete ${env.name}`}
                        onClick={() => open({ kind: "delete", environment: env })}
                      >
                        Delete
                      </button>
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
          onClose={() => setEditing(undefined)}
          onSaved={setDone}
        />
      )}
      <DeleteEnvironmentDialog
        projectId={projectId}
        environment={editing?.kind === "delete" ? editing.environment : undefined}
        onClose={() => setEditing(undefined)}
        onDeleted={setDone}
      />
    </>
  );
}

/** New environment, or editing one: name, base URL, default. Errors at their fields. */
function EnvironmentDialog({
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
  const queryClient = useQueryClient();
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
    await queryClient.invalidateQueries();
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
        <Field label="Name" hint="E.g. staging. At most 200 characters." error={errors.at("name")} required>
          {(control) => (
            <input
              {...control}
              className="input"
              autoFocus
              value={name}
              onChange={(e) => setName(e.target.value)}
            />
          )}
        </Field>
        <Field
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
        >
          {(control) => (
            <input
              {...control}
              className="input input-code"
              inputMode="url"
              autoCapitalize="off"
              spellCheck={false}
              value={baseUrl}
              onChange={(e) => setBaseUrl(e.target.value)}
            />
          )}
        </Field>
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

function DeleteEnvironmentDialog({
  projectId,
  environment,
  onClose,
  onDeleted,
}: {
  projectId: string;
  environment: Environment | undefined;
  onClose: () => void;
  onDeleted: (message: string) => void;
}) {
  const queryClient = useQueryClient();
  const remove = useMutation(ConsoleService.method.deleteEnvironment);
  const close = () => {
    remove.reset();
    onClose();
  };
  return (
    <Dialog
      title={`Delete ${environment?.name ?? "environment"}?`}
      open={environment !== undefined}
      onClose={close}
    >
      <div className="stack">
        <p>
          Runs can no longer be started against <code className="break">{environment?.baseUrl}</code>. Runs
          that used it keep their results.
        </p>
        {environment?.isDefault && (
          <p className="notice notice-warning">
            It is the default: until you choose another, runs that name no environment use the oldest one.
          </p>
        )}
        <ErrorNotice error={remove.error} />
        <DialogActions
          onCancel={close}
          label="Delete environment"
          busyLabel="Deleting…"
          busy={remove.isPending}
          danger
          onConfirm={() =>
            remove.mutate(
              { projectId, environmentId: environment?.id ?? "" },
              {
                onSuccess: async () => {
                  await queryClient.invalidateQueries();
                  onDeleted(`${environment?.name ?? "The environment"} deleted.`);
                  close();
                },
              },
            )
          }
        />
      </div>
    </Dialog>
  );
}
