import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Client, ServiceImpl } from "@connectrpc/connect";
import {
  type AutomationService,
  type Delivery,
  DeliverySchema,
  DeliveryState,
  NotifyMode,
  type Webhook,
  WebhookEvent,
  WebhookKind,
  WebhookSchema,
} from "@testrun/gen/testrun/automation/v1/automation_pb";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { dbDate, dbDateOrNull, newId, type Orm } from "@testrun/kit";
import { authorize } from "../access.js";
import { type DestinationRules, destinationProblem } from "../destination.js";
import { exhausted, invalid, maxWebhooks, notFound, violations } from "../errors.js";
import { newWebhookSecret, type SecretCipher } from "../secrets.js";
import { claimMs } from "../workers.js";

export const eventNames: Record<WebhookEvent, string | undefined> = {
  [WebhookEvent.UNSPECIFIED]: undefined,
  [WebhookEvent.RUN_FINISHED]: "run.finished",
  [WebhookEvent.RUN_FAILED]: "run.failed",
  [WebhookEvent.PLAN_STATE_CHANGED]: "plan.state_changed",
  [WebhookEvent.SCHEDULE_TICK_FAILED]: "schedule.tick_failed",
};
const eventsByName = new Map(Object.entries(eventNames).map(([k, v]) => [v, Number(k) as WebhookEvent]));

/** How long a rotated-out secret keeps signing beside the new one. */
export const previousSecretMs = 24 * 60 * 60 * 1000;

interface WebhookRow {
  id: string;
  project_id: string;
  url: string;
  kind: "standard" | "slack";
  events: string[];
  notify_mode: "failures_and_recoveries" | "every_run";
  paused: boolean;
  previous_secret_expires_at: Date | string | null;
  created_at: Date | string;
  last_state?: "pending" | "delivered" | "failed" | null;
}

interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_type: string;
  run_id: string | null;
  state: "pending" | "delivered" | "failed";
  attempts: number;
  last_response_code: number | null;
  last_error: string;
  created_at: Date | string;
  last_attempt_at: Date | string | null;
  next_attempt_at: Date | string | null;
}

const deliveryStates = {
  pending: DeliveryState.PENDING,
  delivered: DeliveryState.DELIVERED,
  failed: DeliveryState.FAILED,
};

function webhookProto(row: WebhookRow): Webhook {
  const expires = dbDateOrNull(row.previous_secret_expires_at);
  return create(WebhookSchema, {
    id: row.id,
    projectId: row.project_id,
    url: row.url,
    kind: row.kind === "slack" ? WebhookKind.SLACK : WebhookKind.STANDARD,
    events: row.events.map((name) => eventsByName.get(name) ?? WebhookEvent.UNSPECIFIED),
    notifyMode: row.notify_mode === "every_run" ? NotifyMode.EVERY_RUN : NotifyMode.FAILURES_AND_RECOVERIES,
    paused: row.paused,
    previousSecretExpiresAt: expires && expires > new Date() ? timestampFromDate(expires) : undefined,
    createdAt: timestampFromDate(dbDate(row.created_at)),
    lastDeliveryState: row.last_state ? deliveryStates[row.last_state] : undefined,
  });
}

export function deliveryProto(row: DeliveryRow): Delivery {
  const last = dbDateOrNull(row.last_attempt_at);
  const next = dbDateOrNull(row.next_attempt_at);
  return create(DeliverySchema, {
    id: row.id,
    webhookId: row.webhook_id,
    eventType: row.event_type,
    runId: row.run_id ?? undefined,
    state: deliveryStates[row.state],
    attempts: row.attempts,
    lastResponseCode: row.last_response_code ?? undefined,
    lastError: row.last_error,
    createdAt: timestampFromDate(dbDate(row.created_at)),
    lastAttemptAt: last ? timestampFromDate(last) : undefined,
    nextAttemptAt: next && row.state === "pending" ? timestampFromDate(next) : undefined,
  });
}

const webhookColumns = `w.id, w.project_id, w.url, w.kind, w.events, w.notify_mode, w.paused, w.previous_secret_expires_at, w.created_at,
  (select d.state from automation.deliveries d where d.webhook_id = w.id order by d.created_at desc, d.id desc limit 1) as last_state`;

export interface WebhookDeps {
  orm: Orm;
  catalog: Client<typeof CatalogService>;
  cipher: SecretCipher;
  destinations: DestinationRules;
  /** Wakes the delivery workers (a redelivery is due now). */
  wake(): void;
}

function eventList(events: readonly WebhookEvent[]): string[] {
  const names = [...new Set(events.map((e) => eventNames[e]))];
  if (names.length === 0 || names.some((n) => n === undefined))
    throw invalid(
      "events",
      "at least one event, each RUN_FINISHED, RUN_FAILED, PLAN_STATE_CHANGED or SCHEDULE_TICK_FAILED",
    );
  return names as string[];
}

/** CreateWebhook … Redeliver (automation.proto). */
export function webhookHandlers(deps: WebhookDeps): Partial<ServiceImpl<typeof AutomationService>> {
  const em = () => deps.orm.em.fork();
  const load = async (projectId: string, id: string): Promise<WebhookRow> => {
    const rows = await em().execute<WebhookRow[]>(
      `select ${webhookColumns} from automation.webhooks w where w.id = ? and w.project_id = ?`,
      [id, projectId],
    );
    if (!rows[0]) throw notFound("webhook");
    return rows[0];
  };
  const checkUrl = async (url: string, kind: "standard" | "slack", events?: string[]) => {
    const problem = await destinationProblem(deps.destinations, url, kind);
    const problems = problem ? [{ field: "url", description: problem }] : [];
    const error = violations(problems);
    if (error) throw error;
    return events;
  };
  return {
    async createWebhook(req) {
      await authorize(deps.catalog, req.actor, req.projectId, true);
      const kind = req.kind === WebhookKind.SLACK ? "slack" : "standard";
      const events = eventList(req.events);
      await checkUrl(req.url, kind);
      const id = newId("whk");
      const secret = newWebhookSecret();
      await em().transactional(async (tx) => {
        await tx.execute("select pg_advisory_xact_lock(hashtext(?))", [
          `automation.webhooks/${req.projectId}`,
        ]);
        const [{ count }] = (await tx.execute(
          "select count(*)::int as count from automation.webhooks where project_id = ?",
          [req.projectId],
        )) as [{ count: number }];
        if (count >= maxWebhooks) throw exhausted(`a project has at most ${maxWebhooks} webhooks`);
        await tx.execute(
          `insert into automation.webhooks (id, project_id, url, kind, events, notify_mode, secret_sealed, created_at)
           values (?, ?, ?, ?, ?::jsonb, ?, ?, now())`,
          [
            id,
            req.projectId,
            req.url,
            kind,
            JSON.stringify(events),
            req.notifyMode === NotifyMode.EVERY_RUN ? "every_run" : "failures_and_recoveries",
            deps.cipher.seal(secret, id),
          ],
        );
      });
      return { webhook: webhookProto(await load(req.projectId, id)), secret };
    },

    async updateWebhook(req) {
      await authorize(deps.catalog, req.actor, req.projectId, true);
      const current = await load(req.projectId, req.webhookId);
      const events = req.events.length > 0 ? eventList(req.events) : current.events;
      if (req.url !== undefined) await checkUrl(req.url, current.kind);
      await em().execute(
        "update automation.webhooks set url = ?, events = ?::jsonb, notify_mode = ?, paused = ? where id = ? and project_id = ?",
        [
          req.url ?? current.url,
          JSON.stringify(events),
          req.notifyMode === NotifyMode.UNSPECIFIED
            ? current.notify_mode
            : req.notifyMode === NotifyMode.EVERY_RUN
              ? "every_run"
              : "failures_and_recoveries",
          req.paused ?? current.paused,
          req.webhookId,
          req.projectId,
        ],
      );
      return { webhook: webhookProto(await load(req.projectId, req.webhookId)) };
    },

    async deleteWebhook(req) {
      await authorize(deps.catalog, req.actor, req.projectId, true);
      const rows = await em().execute<{ id: string }[]>(
        `with gone as (delete from automation.webhooks where id = ? and project_id = ? returning id),
           log as (delete from automation.deliveries where webhook_id in (select id from gone))
         select id from gone`,
        [req.webhookId, req.projectId],
      );
      if (rows.length === 0) throw notFound("webhook");
      return {};
    },

    async listWebhooks(req) {
      await authorize(deps.catalog, req.actor, req.projectId, false);
      const rows = await em().execute<WebhookRow[]>(
        `select ${webhookColumns} from automation.webhooks w where w.project_id = ? order by w.created_at, w.id limit ?`,
        [req.projectId, maxWebhooks],
      );
      return { webhooks: rows.map(webhookProto) };
    },

    async rotateWebhookSecret(req) {
      await authorize(deps.catalog, req.actor, req.projectId, true);
      const secret = newWebhookSecret();
      const sealed = deps.cipher.seal(secret, req.webhookId);
      // The current secret becomes the previous one, signing beside the new for 24 hours.
      const rows = await em().execute<{ id: string }[]>(
        `update automation.webhooks set previous_secret_sealed = secret_sealed, secret_sealed = ?,
           previous_secret_expires_at = now() + make_interval(secs => ?)
         where id = ? and project_id = ? returning id`,
        [sealed, previousSecretMs / 1000, req.webhookId, req.projectId],
      );
      if (rows.length === 0) throw notFound("webhook");
      return { webhook: webhookProto(await load(req.projectId, req.webhookId)), secret };
    },

    async listDeliveries(req) {
      await authorize(deps.catalog, req.actor, req.projectId, false);
      await load(req.projectId, req.webhookId);
      if (req.pageSize < 0 || req.pageSize > 100) throw invalid("page_size", "must be 0 to 100");
      const size = req.pageSize || 20;
      const after = req.pageToken ? Buffer.from(req.pageToken, "base64url").toString("utf8") : "";
      if (req.pageToken && !/^dlv_[0-9a-z]{26}$/.test(after)) throw invalid("page_token", "is not valid");
      // Delivery ids are time-sorted (ULIDs): newest first is by id.
      const rows = await em().execute<DeliveryRow[]>(
        `select * from automation.deliveries where webhook_id = ? and (? = '' or id < ?) order by id desc limit ?`,
        [req.webhookId, after, after, size + 1],
      );
      const page = rows.slice(0, size);
      const last = page.at(-1);
      return {
        deliveries: page.map(deliveryProto),
        nextPageToken: rows.length > size && last ? Buffer.from(last.id).toString("base64url") : "",
      };
    },

    async redeliver(req) {
      await authorize(deps.catalog, req.actor, req.projectId, true);
      const rows = await em().execute<DeliveryRow[]>(
        `update automation.deliveries set state = 'pending', next_attempt_at = now()
         where id = ? and project_id = ? and state <> 'pending' returning *`,
        [req.deliveryId, req.projectId],
      );
      let row = rows[0];
      if (!row) {
        const existing = await em().execute<DeliveryRow[]>(
          "select * from automation.deliveries where id = ? and project_id = ?",
          [req.deliveryId, req.projectId],
        );
        row = existing[0];
        if (!row) throw notFound("delivery");
        // Brought forward only when its next attempt is further off than a claim lasts: a claimed
        // delivery (an attempt under way) is never due again sooner, so it is not sent twice at once.
        if (row.state === "pending") {
          const [forward] = await em().execute<DeliveryRow[]>(
            `update automation.deliveries set next_attempt_at = now()
             where id = ? and state = 'pending' and next_attempt_at > now() + make_interval(secs => ?) returning *`,
            [row.id, claimMs / 1000],
          );
          if (!forward) return { delivery: deliveryProto(row) };
          row = forward;
        }
      }
      deps.wake();
      return { delivery: deliveryProto({ ...row, state: "pending", next_attempt_at: new Date() }) };
    },
  };
}
