// A project's variables, by name only: values are write-only. Editors and above create them, set
// a new value, and delete them after seeing which test cases name them (docs/console.md,
// "Authoring"). A variable an import created has no value yet: it is marked, and listed on top.
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import type { Variable } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useRef, useState } from "react";
import { Link } from "react-router";
import { formErrors, isNotFound } from "../api";
import { DataTable } from "../components/DataTable";
import { Dialog, DialogActions, ErrorNotice } from "../components/Dialog";
import { Field, useFocusOnError } from "../components/Field";
import { Empty, NotFound, QueryView } from "../components/States";
import { Badge } from "../components/Status";
import { Time } from "../components/Time";
import { plural } from "../format";
import { useProject } from "../project";

/** The catalog's rule for names (CatalogService.CreateVariable), in words. */
const nameRule =
  "A letter or underscore, then letters, digits and underscores; at most 64. Names that differ only in letter case count as the same.";
/** The same rule, to say as the name is typed what the catalog will answer. */
const namePattern = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** What is wrong with a name being typed, in a few words; undefined when it is fine (or empty). */
function nameProblem(name: string): string | undefined {
  if (name === "" || namePattern.test(name)) return undefined;
  if (/^[0-9]/.test(name)) return "Must not start with a digit.";
  const bad = [...name].find((c) => !/[A-Za-z0-9_]/.test(c));
  if (bad) return `“${bad === " " ? "space" : bad}” is not allowed: only letters, digits and underscores.`;
  return "At most 64 characters.";
}
const valueHint =
  "1 to 8192 bytes. Write-only: once saved, nobody can read it back, here or through the API.";

export function Variables() {
  const { projectId, project, editor, name } = useProject();
  const variables = useQuery(ConsoleService.method.listVariables, { projectId });
  const [setting, setSetting] = useState<Variable>();
  const [deleting, setDeleting] = useState<Variable>();
  const [creating, setCreating] = useState(false);
  const [saved, setSaved] = useState<string>();
  if (isNotFound(project.error) || isNotFound(variables.error)) return <NotFound what="Project" />;
  return (
    <>
      <p className="eyebrow">{name}</p>
      <div className="page-head">
        <h1>Variables</h1>
        {editor && (
          <button
            type="button"
            className="button button-primary"
            onClick={() => {
              setSaved(undefined);
              setCreating(true);
            }}
          >
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
      {saved && (
        <p className="notice notice-info" role="status">
          {saved}
        </p>
      )}
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
                          onClick={() => {
                            setSaved(undefined);
                            setSetting(variable);
                          }}
                        >
                          {variable.hasValue ? "Set new value" : "Set value"}
                        </button>
                        <button
                          type="button"
                          className="button button-small button-danger"
                          aria-label={`Delete ${variable.name}`}
                          onClick={() => {
                            setSaved(undefined);
                            setDeleting(variable);
                          }}
                        >
                          Delete
                        </button>
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
        variable={setting}
        onClose={() => setSetting(undefined)}
        onSaved={(variableName, first) =>
          setSaved(
            `${first ? "Value" : "New value"} of ${variableName} saved. Runs started from now on use it.`,
          )
        }
      />
      {creating && (
        <CreateVariableDialog
          projectId={projectId}
          onClose={() => setCreating(false)}
          onCreated={(variableName) =>
            setSaved(`${variableName} created. Steps use it as {{${variableName}}}.`)
          }
        />
      )}
      {deleting && (
        <DeleteVariableDialog
          projectId={projectId}
          variable={deleting}
          onClose={() => setDeleting(undefined)}
          onDeleted={(variableName) => setSaved(`${variableName} deleted.`)}
        />
      )}
    </>
  );
}

/**
 * The variables without a value (created by an import, which carries names only): steps naming
 * them fail until they have one.
 */
function Unset({ variables, editor }: { variables: readonly Variable[]; editor: boolean }) {
  const unset = variables.filter((variable) => !variable.hasValue);
  if (unset.length === 0) return null;
  const one = unset.length === 1;
  return (
    <p className="notice notice-warning break" role="note">
      {one ? "1 variable has" : `${unset.length} variables have`} no value yet:{" "}
      {unset.map((variable, index) => (
        <span key={variable.id}>
          {index > 0 && ", "}
          <code>{variable.name}</code>
        </span>
      ))}
      . Steps naming {one ? "it" : "them"} fail until {one ? "it is" : "they are"} set
      {editor ? ": use Set value in each one's row." : " by an Editor."}
    </p>
  );
}

/** Name and value; the name's rule shown, and checked as it is typed; the catalog has the last word. */
function CreateVariableDialog({
  projectId,
  onClose,
  onCreated,
}: {
  projectId: string;
  onClose: () => void;
  onCreated: (name: string) => void;
}) {
  const queryClient = useQueryClient();
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
          await queryClient.invalidateQueries();
          onCreated(variable?.name ?? name);
          onClose();
        },
      },
    );
  };
  return (
    <Dialog title="New variable" open onClose={onClose}>
      <form ref={form} className="stack" onSubmit={submit} autoComplete="off" noValidate>
        <Field
          label="Name"
          hint={
            <>
              {nameRule} Steps write it as <code>{`{{${namePattern.test(name) ? name : "NAME"}}}`}</code>.
            </>
          }
          error={errors.at("name") ?? typedWrong}
          required
        >
          {(control) => (
            <input
              {...control}
              className="input input-code"
              autoFocus
              autoCapitalize="off"
              spellCheck={false}
              maxLength={64}
              value={name}
              onChange={(e) => setName(e.target.value)}
            />
          )}
        </Field>
        <Field label="Value" hint={valueHint} error={errors.at("value")} required>
          {(control) => (
            <input
              {...control}
              className="input input-code"
              type="password"
              autoComplete="new-password"
              spellCheck={false}
              value={value}
              onChange={(e) => setValue(e.target.value)}
            />
          )}
        </Field>
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

/** Lists the test cases naming the variable before it goes (their steps then fail at run time). */
function DeleteVariableDialog({
  projectId,
  variable,
  onClose,
  onDeleted,
}: {
  projectId: string;
  variable: Variable;
  onClose: () => void;
  onDeleted: (name: string) => void;
}) {
  const queryClient = useQueryClient();
  const uses = useQuery(ConsoleService.method.listVariableUses, { projectId, variableId: variable.id });
  const remove = useMutation(ConsoleService.method.deleteVariable);
  const reference = `{{${variable.name}}}`;
  return (
    <Dialog title={`Delete ${variable.name}?`} open onClose={onClose}>
      <div className="stack">
        <QueryView query={uses} what={`where ${variable.name} is used`}>
          {(data) =>
            data.testCases.length === 0 ? (
              <p>
                No test case names <code>{reference}</code>.
              </p>
            ) : (
              <>
                <p className="notice notice-warning">
                  {data.truncated ? "More than " : ""}
                  {plural(data.testCases.length, "test case")} name <code>{reference}</code>. Their steps fail
                  at run time until they are changed or the variable is created again.
                </p>
                <ul className="uses" aria-label={`Test cases using ${variable.name}`}>
                  {data.testCases.map((testCase) => (
                    <li key={testCase.id}>
                      <Link to={`/projects/${projectId}/test-cases/${testCase.id}`}>{testCase.name}</Link>
                      {!testCase.enabled && <span className="muted"> (disabled)</span>}
                    </li>
                  ))}
                </ul>
              </>
            )
          }
        </QueryView>
        <p>Its value is deleted for good.</p>
        <ErrorNotice error={remove.error} />
        <DialogActions
          onCancel={onClose}
          label="Delete variable"
          busyLabel="Deleting…"
          busy={remove.isPending}
          disabled={uses.isPending}
          danger
          onConfirm={() =>
            remove.mutate(
              { projectId, variableId: variable.id },
              {
                onSuccess: async () => {
                  await queryClient.invalidateQueries();
                  onDeleted(variable.name);
                  onClose();
                },
              },
            )
          }
        />
      </div>
    </Dialog>
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
  /** `first`: the variable had no value before. */
  onSaved: (name: string, first: boolean) => void;
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
        <Field
          label={first ? "Value" : "New value"}
          required
          hint={
            first
              ? `${variable.name} has no value yet. ${valueHint}`
              : "Replaces the current value, which is not shown. Once saved, this value cannot be read back either."
          }
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
