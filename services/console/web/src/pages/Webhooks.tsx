// A project's webhooks: where finished runs are told (Standard Webhooks signed JSON, or Slack
// messages), each with its delivery log and redelivery, who made it and who it acts for. Every
// member reads (Viewers see a URL's origin only: it may be a credential); Editors and above
// create, pause, resume, rotate secrets, delete and redeliver (docs/console.md, "Webhooks").
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import {
  type Delivery,
  DeliveryState,
  NotifyMode,
  type Webhook,
  type WebhookEvent,
  WebhookKind,
} from "@testrun/gen/testrun/automation/v1/automation_pb";
import type { ChangedByMember } from "@testrun/gen/testrun/common/v1/actor_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type FormEvent, useRef, useState } from "react";
import { Link, useParams } from "react-router";
import { formErrors, isNotFound } from "../api";
import {
  deliveryStateName,
  deliveryStateTone,
  notifyModeName,
  webhookEventName,
  webhookEvents,
  webhookKindName,
} from "../automation-format";
import { CopyButton } from "../components/CopyButton";
import { DataTable } from "../components/DataTable";
import { Dialog, DialogActions, ErrorNotice } from "../components/Dialog";
import { Fact, Facts } from "../components/Facts";
import { Field, FieldSet, useFocusOnError } from "../components/Field";
import { Pager, usePageToken } from "../components/Pager";
import { Empty, NotFound, QueryView } from "../components/States";
import { Badge } from "../components/Status";
import { Time } from "../components/Time";
import { changedByName } from "../components/Version";
import { sentence } from "../format";
import { useProject } from "../project";

type Editing =
  | { kind: "create" }
  | { kind: "secret"; webhook: Webhook; secret: string; rotated: boolean }
  | { kind: "rotate"; webhook: Webhook }
  | { kind: "delete"; webhook: Webhook };

const deliveriesPerPage = 20;

export function Webhooks() {
  const { projectId, project, name, editor, path } = useProject();
  const webhooks = useQuery(ConsoleService.method.listWebhooks, { projectId });
  const [editing, setEditing] = useState<Editing>();
  const [done, setDone] = useState<string>();
  const pause = usePauseResume(projectId, setDone);
  if (isNotFound(project.error) || isNotFound(webhooks.error)) return <NotFound what="Project" />;
  const open = (next: Editing) => {
    setDone(undefined);
    pause.reset();
    setEditing(next);
  };
  return (
    <>
      <p className="eyebrow">{name}</p>
      <div className="page-head">
        <h1>Webhooks</h1>
        {editor && (
          <button type="button" className="button button-primary" onClick={() => open({ kind: "create" })}>
            New webhook
          </button>
        )}
      </div>
      <p className="lead">
        Tell other systems when runs finish: signed JSON (Standard Webhooks) to your endpoint, or a message to
        a Slack channel. By default only failures and recoveries are sent.
      </p>
      {project.data && !editor && (
        <p className="notice notice-info">
          Viewers see the webhooks and their deliveries, each URL by its host only (a URL may hold a
          credential); Editors and above change them.
        </p>
      )}
      {done && (
        <p className="notice notice-info" role="status">
          {done}
        </p>
      )}
      <ErrorNotice error={pause.error} />
      <QueryView
        query={webhooks}
        what="webhooks"
        isEmpty={(data) => data.webhooks.length === 0}
        empty={
          <Empty title="No webhooks yet.">
            <p>
              {editor
                ? "Create one to hear about failed runs where your team already is."
                : "An Editor creates them."}
            </p>
          </Empty>
        }
      >
        {(data) => (
          <DataTable
            rows={data.webhooks}
            columns={[
              {
                label: "URL",
                className: "cell-strong",
                cell: (w) => (
                  <Link className="break" to={path(`/webhooks/${w.id}`)}>
                    {w.url}
                  </Link>
                ),
              },
              { label: "Kind", cell: (w) => webhookKindName(w.kind) },
              { label: "Events", cell: (w) => w.events.map(webhookEventName).join(", ") },
              { label: "Notifies", cell: (w) => notifyModeName(w.notifyMode) },
              { label: "Made by", cell: (w) => <WebhookPeople webhook={w} /> },
              { label: "State", cell: (w) => <WebhookStateText webhook={w} /> },
            ]}
            actions={
              editor
                ? (w) => (
                    <div className="row-actions">
                      <button
                        type="button"
                        className="button button-small"
                        aria-label={`${w.paused ? "Resume" : "Pause"} ${w.url}`}
                        disabled={pause.isPending}
                        onClick={() => pause.toggle(w)}
                      >
                        {w.paused ? "Resume" : "Pause"}
                      </button>
                      {w.kind !== WebhookKind.SLACK && (
                        <button
                          type="button"
                          className="button button-small"
                          aria-label={`Rotate the secret of ${w.url}`}
                          onClick={() => open({ kind: "rotate", webhook: w })}
                        >
                          Rotate secret
                        </button>
                      )}
                      <button
                        type="button"
                        className="button button-small button-danger"
                        aria-label={`Delete ${w.url}`}
                        onClick={() => open({ kind: "delete", webhook: w })}
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
      {editing?.kind === "create" && (
        <CreateWebhookDialog
          projectId={projectId}
          onClose={() => setEditing(undefined)}
          onCreated={(webhook, secret) => setEditing({ kind: "secret", webhook, secret, rotated: false })}
        />
      )}
      {editing?.kind === "secret" && (
        <SecretDialog
          secret={editing.secret}
          rotated={editing.rotated}
          slack={editing.webhook.kind === WebhookKind.SLACK}
          onClose={() => setEditing(undefined)}
        />
      )}
      <RotateSecretDialog
        projectId={projectId}
        webhook={editing?.kind === "rotate" ? editing.webhook : undefined}
        onClose={() => setEditing(undefined)}
        onRotated={(webhook, secret) => setEditing({ kind: "secret", webhook, secret, rotated: true })}
      />
      <DeleteWebhookDialog
        projectId={projectId}
        webhook={editing?.kind === "delete" ? editing.webhook : undefined}
        onClose={() => setEditing(undefined)}
        onDeleted={setDone}
      />
    </>
  );
}

/** A member as the list names one: the name, or the id when the catalog could not say. */
const memberName = (member: ChangedByMember | undefined) =>
  member ? member.displayName || `member ${member.memberId}` : "";

/** Who made it, who it acts for when someone else, and who last changed it: names (emails on hover). */
function WebhookPeople({ webhook }: { webhook: Webhook }) {
  const creator = webhook.createdBy?.kind.case === "member" ? webhook.createdBy.kind.value : undefined;
  const actsFor = webhook.actsFor;
  const by = webhook.updatedBy?.kind;
  const changer = by?.case === "member" ? memberName(by.value) : changedByName(webhook.updatedBy);
  return (
    <span className="cell-lines">
      {creator ? (
        <span title={creator.email}>{memberName(creator)}</span>
      ) : (
        <span className="muted">not recorded</span>
      )}
      {actsFor && actsFor.memberId !== creator?.memberId && (
        <span className="small" title={actsFor.email}>
          acts for {memberName(actsFor)}
        </span>
      )}
      {changer && (
        <span className="small muted" title={by?.case === "member" ? by.value.email : undefined}>
          changed by {changer}, <Time at={webhook.updatedAt} />
        </span>
      )}
    </span>
  );
}

function WebhookStateText({ webhook }: { webhook: Webhook }) {
  return (
    <span className="cell-lines">
      <Badge tone={webhook.pausedReason ? "bad" : webhook.paused ? "neutral" : "good"}>
        {webhook.paused ? "Paused" : "Active"}
      </Badge>
      {webhook.pausedReason && <span className="small">{sentence(webhook.pausedReason)}</span>}
      {webhook.lastDeliveryState !== undefined && (
        <span className="small muted">
          Last delivery: {deliveryStateName[webhook.lastDeliveryState].toLowerCase()}
        </span>
      )}
    </span>
  );
}

function usePauseResume(projectId: string, say: (message: string) => void) {
  const queryClient = useQueryClient();
  const update = useMutation(ConsoleService.method.updateWebhook);
  return {
    isPending: update.isPending,
    error: update.error,
    reset: update.reset,
    toggle: (webhook: Webhook) => {
      const paused = !webhook.paused;
      update.mutate(
        { projectId, webhookId: webhook.id, paused },
        {
          onSuccess: async () => {
            await queryClient.invalidateQueries();
            say(
              paused
                ? "Webhook paused: it is sent nothing until resumed."
                : "Webhook resumed: it now acts for you, and sends only while you may manage webhooks.",
            );
          },
        },
      );
    },
  };
}

function CreateWebhookDialog({
  projectId,
  onClose,
  onCreated,
}: {
  projectId: string;
  onClose: () => void;
  onCreated: (webhook: Webhook, secret: string) => void;
}) {
  const queryClient = useQueryClient();
  const save = useMutation(ConsoleService.method.createWebhook);
  const [url, setUrl] = useState("");
  const [kind, setKind] = useState(WebhookKind.STANDARD);
  const [events, setEvents] = useState<WebhookEvent[]>([webhookEvents[0].event]);
  const [notifyMode, setNotifyMode] = useState(NotifyMode.FAILURES_AND_RECOVERIES);
  const form = useRef<HTMLFormElement>(null);
  useFocusOnError(form, save.error);
  const errors = formErrors(save, { url, events, kind, notify_mode: notifyMode });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(
      { projectId, url, kind, events, notifyMode },
      {
        onSuccess: async (answer) => {
          await queryClient.invalidateQueries();
          if (answer.webhook) onCreated(answer.webhook, answer.secret);
          else onClose();
        },
      },
    );
  };
  const toggle = (event: WebhookEvent, on: boolean) =>
    setEvents((now) => (on ? [...now, event] : now.filter((e) => e !== event)));
  return (
    <Dialog title="New webhook" open onClose={onClose}>
      <form ref={form} className="stack" onSubmit={submit} noValidate>
        <FieldSet legend="Kind" error={errors.at("kind")}>
          <div className="choices">
            <label className="choice">
              <input
                type="radio"
                name="webhook-kind"
                checked={kind === WebhookKind.STANDARD}
                onChange={() => setKind(WebhookKind.STANDARD)}
              />
              Standard (signed JSON)
            </label>
            <label className="choice">
              <input
                type="radio"
                name="webhook-kind"
                checked={kind === WebhookKind.SLACK}
                onChange={() => setKind(WebhookKind.SLACK)}
              />
              Slack
            </label>
          </div>
        </FieldSet>
        <Field
          label="URL"
          error={errors.at("url")}
          required
          hint={
            kind === WebhookKind.SLACK ? (
              <>
                A Slack incoming webhook, <code>https://hooks.slack.com/…</code>.
              </>
            ) : (
              <>
                An <code>https://</code> address on the internet; private, loopback and cluster addresses are
                refused.
              </>
            )
          }
        >
          {(control) => (
            <input
              {...control}
              className="input input-code"
              inputMode="url"
              autoCapitalize="off"
              spellCheck={false}
              autoFocus
              value={url}
              onChange={(e) => setUrl(e.target.value)}
            />
          )}
        </Field>
        <FieldSet legend="Events" error={errors.at("events")}>
          <div className="choices">
            {webhookEvents.map((e) => (
              <label key={e.event} className="choice">
                <input
                  type="checkbox"
                  checked={events.includes(e.event)}
                  onChange={(change) => toggle(e.event, change.target.checked)}
                />
                {e.name} <code className="small muted">{e.type}</code>
              </label>
            ))}
          </div>
        </FieldSet>
        <FieldSet legend="Notify on" error={errors.at("notify_mode")}>
          <div className="choices">
            <label className="choice">
              <input
                type="radio"
                name="notify-mode"
                checked={notifyMode === NotifyMode.FAILURES_AND_RECOVERIES}
                onChange={() => setNotifyMode(NotifyMode.FAILURES_AND_RECOVERIES)}
              />
              Failures and recoveries <span className="muted">(default)</span>
            </label>
            <label className="choice">
              <input
                type="radio"
                name="notify-mode"
                checked={notifyMode === NotifyMode.EVERY_RUN}
                onChange={() => setNotifyMode(NotifyMode.EVERY_RUN)}
              />
              Every run
            </label>
          </div>
        </FieldSet>
        {errors.other && <ErrorNotice error={save.error} />}
        <DialogActions
          onCancel={onClose}
          label="Create webhook"
          busyLabel="Creating…"
          busy={save.isPending}
        />
      </form>
    </Dialog>
  );
}

/** The signing secret, this once: it lives only in this dialog's state, never cached or stored. */
function SecretDialog({
  secret,
  rotated,
  slack,
  onClose,
}: {
  secret: string;
  rotated: boolean;
  slack: boolean;
  onClose: () => void;
}) {
  return (
    <Dialog title={rotated ? "Copy the new signing secret" : "Webhook created"} open onClose={onClose}>
      <div className="stack">
        {slack ? (
          <p>Slack messages are not signed: nothing more to set up.</p>
        ) : (
          <>
            <p className="notice notice-warning" role="alert">
              Copy the signing secret now. You will not see it again.
            </p>
            <Field label="Signing secret">
              {(control) => (
                <div className="secret-row">
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
              {rotated
                ? "The previous secret still signs every delivery beside this one for 24 hours: switch your receiver to this one before then."
                : "Your receiver checks each delivery's webhook-signature with it (docs: “Webhooks”)."}
            </p>
          </>
        )}
        <div className="dialog-actions">
          <button type="button" className="button button-primary" onClick={onClose}>
            Done
          </button>
        </div>
      </div>
    </Dialog>
  );
}

function RotateSecretDialog({
  projectId,
  webhook,
  onClose,
  onRotated,
}: {
  projectId: string;
  webhook: Webhook | undefined;
  onClose: () => void;
  onRotated: (webhook: Webhook, secret: string) => void;
}) {
  const queryClient = useQueryClient();
  const rotate = useMutation(ConsoleService.method.rotateWebhookSecret);
  const close = () => {
    rotate.reset();
    onClose();
  };
  return (
    <Dialog title="Rotate the signing secret?" open={webhook !== undefined} onClose={close}>
      <div className="stack">
        <p>
          A new secret is made and shown once. The current one keeps signing beside it for 24 hours, so your
          receiver can switch without missing a delivery.
        </p>
        <ErrorNotice error={rotate.error} />
        <DialogActions
          onCancel={close}
          label="Rotate secret"
          busyLabel="Rotating…"
          busy={rotate.isPending}
          onConfirm={() =>
            rotate.mutate(
              { projectId, webhookId: webhook?.id ?? "" },
              {
                onSuccess: async (answer) => {
                  await queryClient.invalidateQueries();
                  rotate.reset();
                  if (answer.webhook) onRotated(answer.webhook, answer.secret);
                  else onClose();
                },
              },
            )
          }
        />
      </div>
    </Dialog>
  );
}

function DeleteWebhookDialog({
  projectId,
  webhook,
  onClose,
  onDeleted,
}: {
  projectId: string;
  webhook: Webhook | undefined;
  onClose: () => void;
  onDeleted: (message: string) => void;
}) {
  const queryClient = useQueryClient();
  const remove = useMutation(ConsoleService.method.deleteWebhook);
  const close = () => {
    remove.reset();
    onClose();
  };
  return (
    <Dialog title="Delete this webhook?" open={webhook !== undefined} onClose={close}>
      <div className="stack">
        <p>
          <code className="break">{webhook?.url}</code> is sent nothing more, and its delivery log goes with
          it.
        </p>
        <ErrorNotice error={remove.error} />
        <DialogActions
          onCancel={close}
          label="Delete webhook"
          busyLabel="Deleting…"
          busy={remove.isPending}
          danger
          onConfirm={() =>
            remove.mutate(
              { projectId, webhookId: webhook?.id ?? "" },
              {
                onSuccess: async () => {
                  await queryClient.invalidateQueries();
                  onDeleted("Webhook deleted.");
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

/** One webhook and its delivery log, newest first, a page at a time, with Redeliver. */
export function WebhookView() {
  const { webhookId = "" } = useParams();
  const { projectId, project, path, editor } = useProject();
  // No GetWebhook: a project has at most 20, all in one list.
  const webhooks = useQuery(ConsoleService.method.listWebhooks, { projectId });
  const pages = usePageToken();
  const deliveries = useQuery(ConsoleService.method.listDeliveries, {
    projectId,
    webhookId,
    pageSize: deliveriesPerPage,
    pageToken: pages.token,
  });
  const queryClient = useQueryClient();
  const redeliver = useMutation(ConsoleService.method.redeliver);
  const [done, setDone] = useState<string>();
  if (isNotFound(project.error) || isNotFound(webhooks.error) || isNotFound(deliveries.error))
    return <NotFound what="Webhook" />;
  if (webhooks.isPending || webhooks.error) return <QueryView query={webhooks} what="the webhook" />;
  const webhook = webhooks.data.webhooks.find((w) => w.id === webhookId);
  if (!webhook) return <NotFound what="Webhook" />;
  const again = (delivery: Delivery) => {
    setDone(undefined);
    redeliver.mutate(
      { projectId, deliveryId: delivery.id },
      {
        onSuccess: async () => {
          await queryClient.invalidateQueries();
          setDone(`Delivery ${delivery.id} is being sent again now.`);
        },
      },
    );
  };
  return (
    <>
      <p className="eyebrow">
        <Link to={path("/webhooks")}>Webhooks</Link>
      </p>
      <div className="page-head">
        <h1 className="break">{webhook.url}</h1>
      </div>
      <Facts>
        <Fact term="Kind">{webhookKindName(webhook.kind)}</Fact>
        <Fact term="Events">{webhook.events.map(webhookEventName).join(", ")}</Fact>
        <Fact term="Notifies">{notifyModeName(webhook.notifyMode)}</Fact>
        <Fact term="State">
          <WebhookStateText webhook={webhook} />
        </Fact>
        <Fact term="Created">
          <Time at={webhook.createdAt} />
          {webhook.createdBy && <> by {changedByName(webhook.createdBy)}</>}
        </Fact>
        <Fact term="Acts for">
          {webhook.actsFor ? (
            `${memberName(webhook.actsFor)}${webhook.actsFor.email ? ` (${webhook.actsFor.email})` : ""}`
          ) : (
            <span className="muted">nobody recorded</span>
          )}
        </Fact>
        {webhook.updatedBy && (
          <Fact term="Last changed">
            <Time at={webhook.updatedAt} /> by {changedByName(webhook.updatedBy)}
          </Fact>
        )}
        {webhook.previousSecretExpiresAt && (
          <Fact term="Previous secret signs until">
            <Time at={webhook.previousSecretExpiresAt} />
          </Fact>
        )}
      </Facts>
      <div className="section-head">
        <h2>Deliveries</h2>
        <button
          type="button"
          className="button button-small"
          disabled={deliveries.isFetching}
          onClick={() => void deliveries.refetch()}
        >
          Refresh
        </button>
      </div>
      {done && (
        <p className="notice notice-info" role="status">
          {done}
        </p>
      )}
      <ErrorNotice error={redeliver.error} />
      <QueryView
        query={deliveries}
        what="deliveries"
        isEmpty={(data) => data.deliveries.length === 0}
        empty={
          <Empty title="No deliveries yet.">
            <p>Each event sent to this webhook shows here, with its attempts and the receiver's answer.</p>
          </Empty>
        }
      >
        {(data) => (
          <DataTable
            rows={data.deliveries}
            columns={[
              {
                label: "Event",
                cell: (d) => (
                  <span className="cell-lines">
                    <code>{d.eventType}</code>
                    <span className="small muted">{d.id}</span>
                  </span>
                ),
              },
              {
                label: "Run",
                cell: (d) =>
                  d.runId ? (
                    <Link to={path(`/runs/${d.runId}`)}>{d.runId}</Link>
                  ) : (
                    <span className="muted">—</span>
                  ),
              },
              {
                label: "State",
                cell: (d) => (
                  <span className="cell-lines">
                    <Badge tone={deliveryStateTone[d.state]}>{deliveryStateName[d.state]}</Badge>
                    <span className="small muted">
                      {d.attempts === 1 ? "1 attempt" : `${d.attempts} attempts`}
                    </span>
                    {d.state === DeliveryState.PENDING && d.nextAttemptAt && (
                      <span className="small muted">
                        next <Time at={d.nextAttemptAt} />
                      </span>
                    )}
                  </span>
                ),
              },
              {
                // The receiver's last answer: its status code, and what went wrong when it did.
                label: "Last answer",
                cell: (d) => (
                  <span className="cell-lines">
                    {d.lastResponseCode !== undefined ? (
                      <code>{d.lastResponseCode}</code>
                    ) : (
                      <span className="muted">none</span>
                    )}
                    {d.lastError && <span className="small">{sentence(d.lastError)}</span>}
                  </span>
                ),
              },
              {
                label: "When",
                cell: (d) => (
                  <span className="cell-lines">
                    <span>
                      created <Time at={d.createdAt} />
                    </span>
                    <span className="small muted">
                      last attempt <Time at={d.lastAttemptAt} missing="not yet" />
                    </span>
                  </span>
                ),
              },
            ]}
            actions={
              editor
                ? (d) => (
                    <button
                      type="button"
                      className="button button-small"
                      aria-label={`Redeliver ${d.id}`}
                      disabled={redeliver.isPending}
                      onClick={() => again(d)}
                    >
                      Redeliver
                    </button>
                  )
                : undefined
            }
          />
        )}
      </QueryView>
      <Pager label="Delivery pages" pages={pages} query={deliveries} />
    </>
  );
}
