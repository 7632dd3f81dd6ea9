// Project settings, "API & CI": the key list for every member; create and revoke for Editors and
// above; how to use a key.
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { type ApiKeyEntry, ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { KeyExpiry, KeyState } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { type FormEvent, useState } from "react";
import { isNotFound } from "../api";
import { CodeBlock, CopyButton } from "../components/CopyButton";
import { DataTable } from "../components/DataTable";
import { Dialog, DialogActions, type DialogProps, ErrorNotice } from "../components/Dialog";
import { Field, FieldSet } from "../components/Field";
import { Empty, Failed, NotFound, QueryView } from "../components/States";
import { Time } from "../components/Time";
import { keyStateName } from "../format";
import { useProject } from "../project";
import { useSession } from "../session";

const expiries = [
  { value: KeyExpiry.DAYS_30, label: "30 days" },
  { value: KeyExpiry.DAYS_90, label: "90 days" },
  { value: KeyExpiry.YEAR_1, label: "1 year" },
  { value: KeyExpiry.NEVER, label: "Never" },
];

export function ApiKeys() {
  const { projectId, project, editor } = useProject();
  const keys = useQuery(ConsoleService.method.listApiKeys, { projectId });
  const [creating, setCreating] = useState(false);
  const [revoking, setRevoking] = useState<ApiKeyEntry>();

  if (isNotFound(project.error) || isNotFound(keys.error)) return <NotFound what="Project" />;
  return (
    <>
      <p className="eyebrow">{project.data?.project?.name ?? "Project"} settings</p>
      <div className="page-head">
        <h1>API &amp; CI</h1>
        {editor && (
          <button type="button" className="button button-primary" onClick={() => setCreating(true)}>
            Create API key
          </button>
        )}
      </div>
      <p className="lead">
        API keys let CI pipelines and AI agents use this project through the REST API. A key acts for the
        member who created it.
      </p>
      {project.error && <Failed error={project.error} retry={() => void project.refetch()} />}
      {project.data && !editor && (
        <p className="notice notice-info">Viewers can see keys; Editors and above create and revoke them.</p>
      )}
      <div className="columns">
        <section aria-labelledby="keys-heading" className="column-main">
          <h2 id="keys-heading">Keys</h2>
          <QueryView
            query={keys}
            what="API keys"
            isEmpty={(data) => data.keys.length === 0}
            empty={
              <Empty title="No API keys yet.">
                <p>
                  {editor
                    ? "Create one for each pipeline or agent that uses this project."
                    : "An Editor creates them."}
                </p>
              </Empty>
            }
          >
            {(data) => <KeyTable keys={data.keys} editor={editor} onRevoke={setRevoking} />}
          </QueryView>
        </section>
        <UsingAKey />
      </div>
      <CreateKeyDialog projectId={projectId} open={creating} onClose={() => setCreating(false)} />
      <RevokeKeyDialog projectId={projectId} entry={revoking} onClose={() => setRevoking(undefined)} />
    </>
  );
}

function KeyTable({
  keys,
  editor,
  onRevoke,
}: {
  keys: ApiKeyEntry[];
  editor: boolean;
  onRevoke: (entry: ApiKeyEntry) => void;
}) {
  // Rows keyed by the key's id; an entry without its key has nothing to show.
  const rows = keys.flatMap((entry) => (entry.key ? [{ id: entry.key.id, key: entry.key, entry }] : []));
  return (
    <DataTable
      rows={rows}
      columns={[
        { label: "Name", className: "cell-strong", cell: ({ key }) => key.name },
        { label: "Key", cell: ({ key }) => <code>{key.displayPrefix}…</code> },
        { label: "Created", cell: ({ key }) => <Time at={key.createdAt} /> },
        { label: "Last used", cell: ({ key }) => <Time at={key.lastUsedAt} missing="never" /> },
        { label: "Expires", cell: ({ key }) => <Time at={key.expiresAt} missing="never" /> },
        {
          label: "Creator",
          cell: ({ entry }) => (
            <span className="cell-lines">
              <span title={entry.creatorEmail}>{entry.creatorName || "unknown member"}</span>
              {entry.creatorEmail && <span className="muted small">{entry.creatorEmail}</span>}
            </span>
          ),
        },
        {
          label: "State",
          cell: ({ key }) => (
            <span className={`badge badge-${key.state === KeyState.ACTIVE ? "good" : "bad"}`}>
              {keyStateName[key.state]}
            </span>
          ),
        },
      ]}
      actions={
        editor
          ? ({ key, entry }) => {
              // A dead key can still be revoked, which takes it off this list.
              const verb = key.state === KeyState.ACTIVE ? "Revoke" : "Remove";
              return (
                <button
                  type="button"
                  className="button button-small button-danger"
                  onClick={() => onRevoke(entry)}
                  aria-label={`${verb} ${key.name}`}
                >
                  {verb}
                </button>
              );
            }
          : undefined
      }
    />
  );
}

function CreateKeyDialog({ projectId, open, onClose }: DialogProps & { projectId: string }) {
  const queryClient = useQueryClient();
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
          void queryClient.invalidateQueries();
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
          <Field label="Name" required hint="Say where the key is used, e.g. “GitHub Actions – deploy.yml”.">
            {(control) => (
              <input
                {...control}
                className="input"
                maxLength={100}
                value={name}
                onChange={(e) => setName(e.target.value)}
                autoFocus
              />
            )}
          </Field>
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

function RevokeKeyDialog({
  projectId,
  entry,
  onClose,
}: {
  projectId: string;
  entry: ApiKeyEntry | undefined;
  onClose: () => void;
}) {
  const queryClient = useQueryClient();
  const revoke = useMutation(ConsoleService.method.revokeApiKey);
  const close = () => {
    revoke.reset();
    onClose();
  };
  const active = entry?.key?.state === KeyState.ACTIVE;
  const name = entry?.key?.name ?? "key";
  return (
    <Dialog title={active ? `Revoke ${name}?` : `Remove ${name}?`} open={entry !== undefined} onClose={close}>
      <p>
        {active
          ? "Pipelines using it get 401 on their next request. This cannot be undone."
          : `It no longer works (${keyStateName[entry?.key?.state ?? KeyState.UNSPECIFIED].toLowerCase()}). Removing revokes it and takes it off the list. This cannot be undone.`}
      </p>
      <ErrorNotice error={revoke.error} />
      <DialogActions
        onCancel={close}
        label={active ? "Revoke key" : "Remove key"}
        busyLabel="Revoking…"
        busy={revoke.isPending}
        danger
        onConfirm={() =>
          revoke.mutate(
            { projectId, keyId: entry?.key?.id ?? "" },
            {
              onSuccess: async () => {
                await queryClient.invalidateQueries();
                close();
              },
            },
          )
        }
      />
    </Dialog>
  );
}

function UsingAKey() {
  const { apiUrl } = useSession();
  return (
    <aside className="panel column-side" aria-labelledby="using-heading">
      <h2 id="using-heading">Using a key</h2>
      <p>Send it in either header:</p>
      <CodeBlock label="Headers" code={"Authorization: Bearer <key>\nX-Api-Key: <key>"} />
      <p>Try it:</p>
      <CodeBlock
        label="Read the project"
        code={`curl -H "Authorization: Bearer $TESTRUN_API_KEY" \\\n  ${apiUrl}/v1/project`}
      />
      <p>Start a run of a test plan:</p>
      <CodeBlock
        label="Start a run"
        code={`curl -X POST -H "Authorization: Bearer $TESTRUN_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '{"testPlan": "Smoke"}' ${apiUrl}/v1/runs`}
      />
      <ul className="facts">
        <li>
          Poll a run at most every <strong>15 seconds</strong> until it finishes.
        </li>
        <li>
          A key may make <strong>60 requests a minute</strong>, shared by everything using it; beyond that the
          API answers 429 with <code>Retry-After</code>.
        </li>
        <li>
          <strong>Rotate without interruption:</strong> create the new key, put it in the pipeline's secrets,
          then revoke the old one.
        </li>
        <li>Use one key per pipeline or agent, so you can revoke one without stopping the others.</li>
      </ul>
    </aside>
  );
}
