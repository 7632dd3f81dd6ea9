// A project's webhooks: where finished runs are told (Standard Webhooks signed JSON, or Slack
// messages), each with its delivery log and redelivery, who made it and who it acts for. Every
// member reads (Viewers see a URL's origin only: it may be a credential); Editors and above
// create, pause, resume, rotate secrets, delete and redeliver (docs/console.md, "Webhooks").
import { useQuery } from "@connectrpc/connect-query";
import { type Webhook, WebhookKind } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { Link } from "react-router";
import { isNotFound } from "../../api";
import { notifyModeName, webhookEventName, webhookKindName } from "../../automation-format";
import { DataTable } from "../../components/DataTable";
import { ErrorNotice } from "../../components/Dialog";
import { DeleteDialog, DoneNotice, RowAction, useListPage } from "../../components/ListPage";
import { Empty, NotFound, QueryView } from "../../components/States";
import { usePauseResume } from "../../components/usePauseResume";
import { useProject } from "../../project";
import { CreateWebhookDialog } from "./CreateWebhookDialog";
import { RotateSecretDialog } from "./RotateSecretDialog";
import { SecretDialog } from "./SecretDialog";
import { WebhookPeople } from "./WebhookPeople";
import { WebhookStateText } from "./WebhookStateText";

type Editing =
  | { kind: "create" }
  | { kind: "secret"; webhook: Webhook; secret: string; rotated: boolean }
  | { kind: "rotate"; webhook: Webhook }
  | { kind: "delete"; webhook: Webhook };

export function Webhooks() {
  const { projectId, project, name, editor, path } = useProject();
  const webhooks = useQuery(ConsoleService.method.listWebhooks, { projectId });
  const list = useListPage<Editing>({ onOpen: () => pause.reset() });
  const pause = usePauseResume(ConsoleService.method.updateWebhook, {
    isPaused: (webhook: Webhook) => webhook.paused,
    request: (webhook, paused) => ({ projectId, webhookId: webhook.id, paused }),
    said: (_, paused) =>
      paused
        ? "Webhook paused: it is sent nothing until resumed."
        : "Webhook resumed: it now acts for you, and sends only while you may manage webhooks.",
    invalidates: [ConsoleService.method.listWebhooks],
    say: list.say,
  });
  if (isNotFound(project.error) || isNotFound(webhooks.error)) return <NotFound what="Project" />;
  const { editing, open, close } = list;
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
      <DoneNotice done={list.done} />
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
                      <RowAction
                        action="Delete"
                        item={w.url}
                        danger
                        onClick={() => open({ kind: "delete", webhook: w })}
                      />
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
          onClose={close}
          onCreated={(webhook, secret) => open({ kind: "secret", webhook, secret, rotated: false })}
        />
      )}
      {editing?.kind === "secret" && (
        <SecretDialog
          secret={editing.secret}
          rotated={editing.rotated}
          slack={editing.webhook.kind === WebhookKind.SLACK}
          onClose={close}
        />
      )}
      <RotateSecretDialog
        projectId={projectId}
        webhook={editing?.kind === "rotate" ? editing.webhook : undefined}
        onClose={close}
        onRotated={(webhook, secret) => open({ kind: "secret", webhook, secret, rotated: true })}
      />
      <DeleteDialog
        method={ConsoleService.method.deleteWebhook}
        item={editing?.kind === "delete" ? editing.webhook : undefined}
        request={(webhook) => ({ projectId, webhookId: webhook.id })}
        invalidates={[ConsoleService.method.listWebhooks]}
        title={() => "Delete this webhook?"}
        label="Delete webhook"
        deleted={() => "Webhook deleted."}
        onClose={close}
        onDeleted={list.say}
      >
        {(webhook) => (
          <p>
            <code className="break">{webhook.url}</code> is sent nothing more, and its delivery log goes with
            it.
          </p>
        )}
      </DeleteDialog>
    </>
  );
}
