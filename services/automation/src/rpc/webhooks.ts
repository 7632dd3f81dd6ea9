import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
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
import type { CatalogService, Member } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
import { dbDate, dbDateOrNull, newId, type Orm } from "@testrun/kit";
import { authorize, mayManage } from "../access.js";
import { type DestinationRules, destinationProblem } from "../destination.js";
import { exhausted, invalid, maxWebhooks, notFound, violations } from "../errors.js";
import { changedBy, memberOf, membersById, namedMember } from "../members.js";
import type { RedeliveryLimits } from "../redeliveries.js";
import { newWebhookSecret, type SecretCipher } from "../secrets.js";
import { openUrl, originOnly, sealedUrl, urlOrigin } from "../webhook-urls.js";
import { claimMs } from "../workers.js";

export const eventNames: Record<WebhookEvent, string | undefined> = {
  [WebhookEvent.UNSPECIFIED]: undefined,
  [WebhookEvent.RUN_FINISHED]: "run.finished",
  [WebhookEvent.RUN_FAILED]: "run.failed",
  [WebhookEvent.PLAN_STATE_CHANGED]: "plan.state_changed",
  [WebhookEvent.SCHEDULE_TICK_FAILED]: "schedule.tick_failed",
  [WebhookEvent.TEST_CASE_QUARANTINED]: "test_case.quarantined",
  [WebhookEvent.TEST_CASE_QUARANTINE_LIFTED]: "test_case.quarantine_lifted",
  [WebhookEvent.TEST_CASE_QUARANTINE_EXPIRED]: "test_case.quarantine_expired",
  [WebhookEvent.RUN_NEW_FAILURES]: "run.new_failures",
  [WebhookEvent.FAILURE_GROUP_OPENED]: "failure_group.opened",
};
const eventsByName = new Map(Object.entries(eventNames).map(([k, v]) => [v, Number(k) as WebhookEvent]));

/** How long a rotated-out secret keeps signing beside the new one. */
export const previousSecretMs = 24 * 60 * 60 * 1000;

interface WebhookRow {
  id: string;
  project_id: string;
  /** Plain only on a row not sealed yet (webhook-urls.ts). */
  url: string | null;
  url_sealed: string | null;
  url_origin: string;
  kind: "standard" | "slack";
  events: string[];
  notify_mode: "failures_and_recoveries" | "every_run";
  paused: boolean;
  paused_reason: string;
  acts_for_member_id: string | null;
  created_by_member_id: string | null;
  updated_by_member_id: string | null;
  updated_by_operator: string | null;
  updated_at: Date | string | null;
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

/** How a webhook is shown: its URL as this reader may see it, and the members it names. */
interface Shown {
  url: string;
  members: Map<string, Member>;
}

function webhookProto(row: WebhookRow, shown: Shown): Webhook {
  const expires = dbDateOrNull(row.previous_secret_expires_at);
  const updated = dbDateOrNull(row.updated_at);
  return create(WebhookSchema, {
    id: row.id,
    projectId: row.project_id,
    url: shown.url,
    kind: row.kind === "slack" ? WebhookKind.SLACK : WebhookKind.STANDARD,
    events: row.events.map((name) => eventsByName.get(name) ?? WebhookEvent.UNSPECIFIED),
    notifyMode: row.notify_mode === "every_run" ? NotifyMode.EVERY_RUN : NotifyMode.FAILURES_AND_RECOVERIES,
    paused: row.paused,
    previousSecretExpiresAt: expires && expires > new Date() ? timestampFromDate(expires) : undefined,
    createdAt: timestampFromDate(dbDate(row.created_at)),
    lastDeliveryState: row.last_state ? deliveryStates[row.last_state] : undefined,
    createdBy: changedBy(row.created_by_member_id, null, shown.members),
    updatedBy: changedBy(row.updated_by_member_id, row.updated_by_operator, shown.members),
    actsFor: row.acts_for_member_id ? namedMember(row.acts_for_member_id, shown.members) : undefined,
    pausedReason: row.paused_reason,
    updatedAt: updated ? timestampFromDate(updated) : undefined,
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

const webhookColumns = `w.id, w.project_id, w.url, w.url_sealed, w.url_origin, w.kind, w.events, w.notify_mode, w.paused,
  w.paused_reason, w.acts_for_member_id, w.created_by_member_id, w.updated_by_member_id, w.updated_by_operator,
  w.updated_at, w.previous_secret_expires_at, w.created_at,
  (select d.state from automation.deliveries d where d.webhook_id = w.id order by d.created_at desc, d.id desc limit 1) as last_state`;

export interface WebhookDeps {
  orm: Orm;
  catalog: Client<typeof CatalogService>;
  cipher: SecretCipher;
  destinations: DestinationRules;
  /** Wakes the delivery workers (a redelivery is due now). */
  wake(): void;
  /** The bounds on Redeliver per caller and per webhook (redeliveries.ts). */
  redeliveries: RedeliveryLimits;
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

/** What creating a webhook, resuming it or changing where or what it sends needs. */
const needsMember =
  "a webhook acts for a member: only members create or resume webhooks, or change their URL or events";

/** Who a change is recorded as: the member, or the operator by the name it gave. */
const changer = (actor: Actor | undefined) => ({
  memberId: actor?.kind.case === "memberId" ? actor.kind.value : null,
  operator: actor?.kind.case === "operator" ? actor.kind.value.name : null,
});

/** CreateWebhook … Redeliver (automation.proto). */
export function webhookHandlers(deps: WebhookDeps): Partial<ServiceImpl<typeof AutomationService>> {
  const em = () => deps.orm.em.fork();
  /**
   * Webhooks as a reader sees them: URLs in full for those who manage webhooks (opened for them
   * alone), their origin for others; the members they name, named.
   */
  const shownTo = async (fullUrls: boolean, rows: WebhookRow[]): Promise<Webhook[]> => {
    const members = await membersById(
      deps.catalog,
      rows.flatMap((r) => [r.created_by_member_id, r.updated_by_member_id, r.acts_for_member_id]),
    );
    return rows.map((row) =>
      webhookProto(row, {
        url: fullUrls
          ? openUrl(deps.cipher, row.id, row)
          : originOnly(row.url_origin || urlOrigin(row.url ?? "")),
        members,
      }),
    );
  };
  const shownOne = async (fullUrls: boolean, row: WebhookRow) =>
    (await shownTo(fullUrls, [row]))[0] as Webhook;
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
      const memberId = memberOf(req.actor, needsMember);
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
        const url = sealedUrl(deps.cipher, id, req.url);
        await tx.execute(
          `insert into automation.webhooks (id, project_id, url_sealed, url_origin, kind, events, notify_mode, secret_sealed,
             acts_for_member_id, created_by_member_id, created_at)
           values (?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, now())`,
          [
            id,
            req.projectId,
            url.urlSealed,
            url.urlOrigin,
            kind,
            JSON.stringify(events),
            req.notifyMode === NotifyMode.EVERY_RUN ? "every_run" : "failures_and_recoveries",
            deps.cipher.seal(secret, id),
            memberId,
            memberId,
          ],
        );
      });
      return { webhook: await shownOne(true, await load(req.projectId, id)), secret };
    },

    async updateWebhook(req) {
      await authorize(deps.catalog, req.actor, req.projectId, true);
      const current = await load(req.projectId, req.webhookId);
      const events = req.events.length > 0 ? eventList(req.events) : current.events;
      // Resuming it, or changing where or what it sends, makes the caller the member it acts for
      // (as activating a schedule or changing what it runs does): its deliveries are then theirs.
      const resumes = req.paused === false && current.paused;
      const retargets = req.url !== undefined || req.events.length > 0;
      const actsFor = resumes || retargets ? memberOf(req.actor, needsMember) : current.acts_for_member_id;
      if (req.url !== undefined) await checkUrl(req.url, current.kind);
      const paused = req.paused ?? current.paused;
      const url = sealedUrl(deps.cipher, current.id, req.url ?? openUrl(deps.cipher, current.id, current));
      const by = changer(req.actor);
      // The URL is written sealed whatever changed: a row not sealed yet is sealed here.
      await em().execute(
        `update automation.webhooks set url = null, url_sealed = ?, url_origin = ?, events = ?::jsonb, notify_mode = ?,
           paused = ?, paused_reason = ?, acts_for_member_id = ?, updated_by_member_id = ?, updated_by_operator = ?, updated_at = now()
         where id = ? and project_id = ?`,
        [
          url.urlSealed,
          url.urlOrigin,
          JSON.stringify(events),
          req.notifyMode === NotifyMode.UNSPECIFIED
            ? current.notify_mode
            : req.notifyMode === NotifyMode.EVERY_RUN
              ? "every_run"
              : "failures_and_recoveries",
          paused,
          paused ? current.paused_reason : "",
          actsFor,
          by.memberId,
          by.operator,
          req.webhookId,
          req.projectId,
        ],
      );
      return { webhook: await shownOne(true, await load(req.projectId, req.webhookId)) };
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
      const access = await authorize(deps.catalog, req.actor, req.projectId, false);
      const rows = await em().execute<WebhookRow[]>(
        `select ${webhookColumns} from automation.webhooks w where w.project_id = ? order by w.created_at, w.id limit ?`,
        [req.projectId, maxWebhooks],
      );
      return { webhooks: await shownTo(mayManage(req.actor, access), rows) };
    },

    async rotateWebhookSecret(req) {
      await authorize(deps.catalog, req.actor, req.projectId, true);
      const secret = newWebhookSecret();
      const sealed = deps.cipher.seal(secret, req.webhookId);
      // The current secret becomes the previous one, signing beside the new for 24 hours.
      const by = changer(req.actor);
      const rows = await em().execute<{ id: string }[]>(
        `update automation.webhooks set previous_secret_sealed = secret_sealed, secret_sealed = ?,
           previous_secret_expires_at = now() + make_interval(secs => ?),
           updated_by_member_id = ?, updated_by_operator = ?, updated_at = now()
         where id = ? and project_id = ? returning id`,
        [sealed, previousSecretMs / 1000, by.memberId, by.operator, req.webhookId, req.projectId],
      );
      if (rows.length === 0) throw notFound("webhook");
      return { webhook: await shownOne(true, await load(req.projectId, req.webhookId)), secret };
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
      // A webhook the system paused sends nothing for the member it acted for: resumed first, it
      // acts for whoever resumed it. (Paused after this check, the delivery is stopped when sent.)
      const [target] = await em().execute<{ webhook_id: string; paused_reason: string }[]>(
        `select w.id as webhook_id, w.paused_reason from automation.deliveries d join automation.webhooks w on w.id = d.webhook_id
         where d.id = ? and d.project_id = ?`,
        [req.deliveryId, req.projectId],
      );
      if (!target) throw notFound("delivery");
      if (target.paused_reason)
        throw new ConnectError(
          `the webhook is paused, and sends nothing until resumed: ${target.paused_reason}`,
          Code.FailedPrecondition,
        );
      // Counted only for a redelivery that may be sent (RESOURCE_EXHAUSTED past a bound).
      deps.redeliveries.take(req.actor, target.webhook_id);
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
