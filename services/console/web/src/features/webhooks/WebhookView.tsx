// One webhook and its delivery log, newest first, a page at a time, with Redeliver (Editors and above).
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { type Delivery, DeliveryState } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useState } from "react";
import { Link, useParams } from "react-router";
import { isNotFound } from "../../api";
import {
  deliveryStateName,
  deliveryStateTone,
  notifyModeName,
  webhookEventName,
  webhookKindName,
} from "../../automation-format";
import { DataTable } from "../../components/DataTable";
import { ErrorNotice } from "../../components/Dialog";
import { Fact, Facts } from "../../components/Facts";
import { DoneNotice } from "../../components/ListPage";
import { Pager, usePageToken } from "../../components/Pager";
import { Empty, NotFound, QueryView } from "../../components/States";
import { Badge } from "../../components/Status";
import { Time } from "../../components/Time";
import { useInvalidate } from "../../components/useInvalidate";
import { changedByName } from "../../components/Version";
import { sentence } from "../../format";
import { useProject } from "../../project";
import { memberName } from "./people";
import { WebhookStateText } from "./WebhookStateText";

const deliveriesPerPage = 20;

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
  const invalidate = useInvalidate();
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
          // The delivery's state, and the webhook's last delivery state.
          await invalidate(ConsoleService.method.listDeliveries, ConsoleService.method.listWebhooks);
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
      <DoneNotice done={done} />
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
