import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { type CatalogService, Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
import { QuarantineEventType } from "@testrun/gen/testrun/runs/v1/health_pb";
import type { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { dbDate, type Orm, requireAccess } from "@testrun/kit";
import type { EgressGuard } from "@testrun/kit/egress";
import type { Logger } from "pino";
import { dueTick } from "./cron.js";
import { type DestinationRules, destinationProblem } from "./destination.js";
import { enqueue, type Render, runEvents } from "./events.js";
import { lostRightsReason } from "./members.js";
import type { QuarantineData } from "./payload.js";
import { type SecretCipher, signatureHeader } from "./secrets.js";
import { openUrl, withoutUrl } from "./webhook-urls.js";

// The background work every replica does (docs/automation.md): PostgreSQL decides who does what
// (`for update skip locked`), so replicas need no leader and never do one piece of work twice at once.

export interface WorkerDeps {
  orm: Orm;
  logger: Logger;
  catalog: Client<typeof CatalogService>;
  runs: Client<typeof RunsService>;
  /** Where people open the console (APP_URL): links to test cases in quarantine events. */
  appUrl: string;
  cipher: SecretCipher;
  guard: EgressGuard;
  destinations: DestinationRules;
  render: Render;
  retryDelaysMs: readonly number[];
  timeoutMs: number;
  concurrency: number;
}

/** The most of an answer a delivery reads (the rest is dropped): only its status and a line are kept. */
export const responseReadBytes = 64 * 1024;
/** How long a claimed delivery is the claimer's before another replica may try it (a crash mid-attempt). */
export const claimMs = 60_000;
/** How long a tick whose start keeps failing for want of the runs service is retried. */
const tickGiveUpMs = 10 * 60_000;

const oneLine = (text: string) => text.replace(/\s+/g, " ").slice(0, 300);

interface TickRow {
  schedule_id: string;
  due_at: Date | string;
  project_id: string;
  attempts: number;
  name: string;
  environment_id: string;
  test_plan_id: string | null;
  tags: string[] | null;
  acts_for_member_id: string;
}

/** Records every due tick once: the latest tick at or before now of each due schedule. */
export async function recordDueTicks(deps: WorkerDeps): Promise<number> {
  return deps.orm.em.fork().transactional(async (em) => {
    const due = await em.execute<
      {
        id: string;
        project_id: string;
        cron: string;
        time_zone: string;
        next_due_at: Date | string;
        now: Date | string;
      }[]
    >(
      `select id, project_id, cron, time_zone, next_due_at, now() as now from automation.schedules
       where state = 'active' and next_due_at <= now() order by next_due_at limit 100 for update skip locked`,
    );
    for (const schedule of due) {
      const { due: dueAt, next } = dueTick(
        schedule.cron,
        schedule.time_zone,
        dbDate(schedule.next_due_at),
        dbDate(schedule.now),
      );
      await em.execute(
        `insert into automation.schedule_ticks (schedule_id, due_at, project_id, state, retry_at, created_at)
         values (?, ?, ?, 'pending', now(), now()) on conflict do nothing`,
        [schedule.id, dueAt, schedule.project_id],
      );
      await em.execute("update automation.schedules set next_due_at = ? where id = ?", [next, schedule.id]);
    }
    return due.length;
  });
}

/**
 * Starts the run of one pending tick, holding its row locked meanwhile: StartRun's idempotency
 * key (`<schedule>@<due>`) makes a retry after a crash return the same run. False when none is due.
 */
export async function startOneTick(deps: WorkerDeps): Promise<boolean> {
  return deps.orm.em.fork().transactional(async (em) => {
    const rows = await em.execute<TickRow[]>(
      `select t.schedule_id, t.due_at, t.project_id, t.attempts, s.name, s.environment_id, s.test_plan_id, s.tags, s.acts_for_member_id
       from automation.schedule_ticks t join automation.schedules s on s.id = t.schedule_id
       where t.state = 'pending' and t.retry_at <= now() order by t.retry_at limit 1 for update of t skip locked`,
    );
    const tick = rows[0];
    if (!tick) return false;
    const dueAt = dbDate(tick.due_at);
    const actor = { kind: { case: "memberId" as const, value: tick.acts_for_member_id } };
    const suffix = " (scheduled)";
    try {
      const { run } = await deps.runs.startRun(
        {
          actor,
          projectId: tick.project_id,
          environment: tick.environment_id,
          selection: tick.test_plan_id
            ? { case: "testPlan", value: tick.test_plan_id }
            : { case: "tags", value: { tags: tick.tags ?? [] } },
          name: [...tick.name].slice(0, 200 - suffix.length).join("") + suffix,
          idempotencyKey: `${tick.schedule_id}@${dueAt.toISOString()}`,
        },
        { timeoutMs: 30_000 },
      );
      await em.execute(
        "update automation.schedule_ticks set state = 'started', run_id = ?, attempts = attempts + 1 where schedule_id = ? and due_at = ?",
        [run?.id ?? null, tick.schedule_id, dueAt],
      );
      // At debug: the runs service logs the run's start (and its end) at info.
      deps.logger.debug({ scheduleId: tick.schedule_id, runId: run?.id }, "schedule started a run");
      return true;
    } catch (error) {
      const e = ConnectError.from(error);
      const transient = [
        Code.Unavailable,
        Code.Aborted,
        Code.DeadlineExceeded,
        Code.Internal,
        Code.Unknown,
      ].includes(e.code);
      if (transient && Date.now() - dueAt.getTime() < tickGiveUpMs) {
        await em.execute(
          "update automation.schedule_ticks set attempts = attempts + 1, retry_at = now() + interval '10 seconds' where schedule_id = ? and due_at = ?",
          [tick.schedule_id, dueAt],
        );
        deps.logger.warn(
          { err: e, scheduleId: tick.schedule_id },
          "a tick's run could not start yet; retrying",
        );
        return true;
      }
      // The member may have lost the right to start runs (or the project): then the schedule stops.
      let lostRights = false;
      if (e.code === Code.PermissionDenied || e.code === Code.NotFound)
        lostRights = await deps.catalog
          .checkAccess({ actor, projectId: tick.project_id, permission: Permission.START_RUN })
          .then(
            () => false,
            (checkError: unknown) =>
              [Code.PermissionDenied, Code.NotFound].includes(ConnectError.from(checkError).code),
          );
      const failure = lostRights
        ? `member ${tick.acts_for_member_id} can no longer start runs in this project`
        : e.code === Code.NotFound
          ? `the environment or test plan no longer exists: ${oneLine(e.rawMessage)}`
          : oneLine(e.rawMessage);
      await em.execute(
        "update automation.schedule_ticks set state = 'failed', failure = ?, attempts = attempts + 1 where schedule_id = ? and due_at = ?",
        [failure, tick.schedule_id, dueAt],
      );
      if (lostRights)
        await em.execute(
          "update automation.schedules set state = 'stopped', next_due_at = null, stopped_reason = ? where id = ?",
          [`stopped: ${failure}; activate it again to act for yourself`, tick.schedule_id],
        );
      deps.logger.warn(
        { scheduleId: tick.schedule_id, projectId: tick.project_id, failure, stopped: lostRights },
        "a schedule's run could not start",
      );
      await enqueue(
        em,
        tick.project_id,
        [
          {
            type: "schedule.tick_failed",
            timestamp: dueAt,
            tick: { scheduleId: tick.schedule_id, scheduleName: tick.name, dueAt, failure },
          },
        ],
        deps.render,
      );
      return true;
    }
  });
}

/**
 * Follows finished runs from the stored cursor, held locked (one replica at a time follows): the
 * deliveries of a page and the cursor past it commit together, so a crash replays the page, never
 * loses it. Answers how many runs it read.
 */
export async function followRuns(deps: WorkerDeps): Promise<number> {
  return deps.orm.em.fork().transactional(async (em) => {
    const rows = await em.execute<{ cursor: string }[]>(
      "select cursor from automation.run_cursor where id = 1 for update skip locked",
    );
    const row = rows[0];
    if (!row) return 0;
    const page = await deps.runs.listFinishedRuns({ cursor: row.cursor, limit: 100 }, { timeoutMs: 30_000 });
    for (const run of page.runs) await enqueue(em, run.projectId, await runEvents(em, run), deps.render);
    await em.execute("update automation.run_cursor set cursor = ? where id = 1", [page.nextCursor]);
    return page.runs.length;
  });
}

const quarantineEventNames: Partial<Record<QuarantineEventType, string>> = {
  [QuarantineEventType.STARTED]: "test_case.quarantined",
  [QuarantineEventType.LIFTED]: "test_case.quarantine_lifted",
  [QuarantineEventType.EXPIRED]: "test_case.quarantine_expired",
};

const isoOf = (stamp: Timestamp | undefined) => (stamp ? timestampDate(stamp).toISOString() : null);

/**
 * Follows quarantines started, lifted and expired (the runs service's ListQuarantineEvents) as
 * followRuns follows runs: the page's deliveries and the cursor past it commit together.
 */
export async function followQuarantines(deps: WorkerDeps): Promise<number> {
  return deps.orm.em.fork().transactional(async (em) => {
    const rows = await em.execute<{ quarantine_cursor: string }[]>(
      "select quarantine_cursor from automation.run_cursor where id = 1 for update skip locked",
    );
    const row = rows[0];
    if (!row) return 0;
    const page = await deps.runs.listQuarantineEvents(
      { cursor: row.quarantine_cursor, limit: 100 },
      { timeoutMs: 30_000 },
    );
    for (const event of page.events) {
      const type = quarantineEventNames[event.type];
      const q = event.quarantine;
      if (!type || !q) continue;
      const data: QuarantineData = {
        testCase: {
          id: q.testCaseId,
          name: event.testCaseName,
          url: `${deps.appUrl}/projects/${encodeURIComponent(event.projectId)}/test-cases/${encodeURIComponent(q.testCaseId)}`,
        },
        reason: q.reason,
        startedAt: isoOf(q.startedAt) ?? "",
        expiresAt: isoOf(q.expiresAt) ?? "",
        startedByMemberId: q.startedByMemberId ?? null,
        endedAt: isoOf(q.endedAt),
        liftedByMemberId: q.liftedByMemberId ?? null,
      };
      const timestamp = event.at ? timestampDate(event.at) : new Date();
      await enqueue(em, event.projectId, [{ type, timestamp, quarantine: data }], deps.render);
    }
    await em.execute("update automation.run_cursor set quarantine_cursor = ? where id = 1", [
      page.nextCursor,
    ]);
    return page.events.length;
  });
}

interface DueDelivery {
  id: string;
  webhook_id: string;
  project_id: string;
  body: string;
  attempts: number;
  /** As claimed: plain only on a row not sealed yet; opened into `url` when it is sent. */
  url: string;
  url_sealed: string | null;
  acts_for_member_id: string | null;
  paused_reason: string;
  kind: "standard" | "slack";
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_valid: boolean;
}

/** Claims up to `limit` due deliveries (their next attempt pushed past the claim), committed at once. */
async function claimDeliveries(deps: WorkerDeps, limit: number): Promise<DueDelivery[]> {
  return deps.orm.em.fork().transactional(async (em) => {
    const rows = await em.execute<DueDelivery[]>(
      `select d.id, d.webhook_id, w.project_id, d.body, d.attempts, w.url, w.url_sealed, w.acts_for_member_id, w.paused_reason,
         w.kind, w.secret_sealed, w.previous_secret_sealed,
         coalesce(w.previous_secret_expires_at > now(), false) as previous_valid
       from automation.deliveries d join automation.webhooks w on w.id = d.webhook_id
       where d.state = 'pending' and d.next_attempt_at <= now()
       order by d.next_attempt_at limit ? for update of d skip locked`,
      [limit],
    );
    if (rows.length > 0)
      await em.execute(
        `update automation.deliveries set next_attempt_at = now() + make_interval(secs => ?) where id in (${rows.map(() => "?").join(", ")})`,
        [claimMs / 1000, ...rows.map((r) => r.id)],
      );
    return rows;
  });
}

/** Reads at most `responseReadBytes` of an answer, then lets the rest go. */
async function readBounded(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < responseReadBytes) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
  }
  await reader.cancel().catch(() => undefined);
  return Buffer.concat(chunks).subarray(0, responseReadBytes).toString("utf8");
}

/**
 * Why a webhook with no member recorded (made before webhooks recorded one) is paused: a delivery
 * cannot be checked for anyone. The migration that added members pauses those it found the same way.
 */
export const noMemberRecorded =
  "no member recorded: it was made before webhooks recorded who made them; resume it to act for yourself";

/** Whether a member may still manage a project's webhooks: yes, no, or cannot tell now. */
type Verdict = "allowed" | "lost" | "unknown";

/** One answer per member and project within one pass (several deliveries of a webhook are due at once). */
export type AccessAnswers = Map<string, Promise<Verdict>>;

/**
 * Asks the catalog whether the member a webhook acts for may still manage the project's webhooks
 * (EDIT: what creating one needs), as a schedule's run start asks it for its member: a removed
 * member, or one now a Viewer, is refused.
 */
function mayStillManage(deps: WorkerDeps, memberId: string, projectId: string, answers: AccessAnswers) {
  const key = `${memberId}\0${projectId}`;
  let answer = answers.get(key);
  if (!answer) {
    answer = requireAccess(
      deps.catalog,
      { kind: { case: "memberId", value: memberId } } as Actor,
      projectId,
      Permission.EDIT,
    ).then(
      (): Verdict => "allowed",
      (error: unknown): Verdict =>
        [Code.PermissionDenied, Code.NotFound, Code.InvalidArgument].includes(ConnectError.from(error).code)
          ? "lost"
          : "unknown",
    );
    answers.set(key, answer);
  }
  return answer;
}

/**
 * Stops every delivery of the webhook still pending (none is sent for the member it acted for),
 * pausing it with `reason` unless the system paused it already. Nothing is done when, by now, it
 * acts for another member or was resumed (the claim read it before): answers whether it stopped
 * them (false: try the delivery again, as the webhook stands now).
 */
async function stopDeliveries(deps: WorkerDeps, delivery: DueDelivery, reason?: string): Promise<boolean> {
  return deps.orm.em.fork().transactional(async (em) => {
    const [row] = await em.execute<{ acts_for_member_id: string | null; paused_reason: string }[]>(
      "select acts_for_member_id, paused_reason from automation.webhooks where id = ? for update",
      [delivery.webhook_id],
    );
    if (!row) return true; // deleted, its deliveries with it
    if (row.acts_for_member_id !== delivery.acts_for_member_id) return false;
    const why = row.paused_reason || reason;
    if (!why) return false;
    if (!row.paused_reason) {
      await em.execute("update automation.webhooks set paused = true, paused_reason = ? where id = ?", [
        why,
        delivery.webhook_id,
      ]);
      deps.logger.warn(
        {
          webhookId: delivery.webhook_id,
          projectId: delivery.project_id,
          memberId: delivery.acts_for_member_id,
        },
        "a webhook's member can no longer manage webhooks: paused it; nothing is sent for them",
      );
    }
    await em.execute(
      `update automation.deliveries set state = 'failed', next_attempt_at = null, last_error = ?
       where webhook_id = ? and (state = 'pending' or id = ?)`,
      [`not sent: the webhook is paused: ${why}`, delivery.webhook_id, delivery.id],
    );
    return true;
  });
}

/** How soon a delivery whose member could not be checked (the catalog unavailable) is tried again. */
const recheckSeconds = 10;

/**
 * Checked at send, right before the attempt: a delivery is sent only while the member its webhook
 * acts for may manage the project's webhooks. Answers whether to send it; otherwise it was
 * stopped (the webhook paused), or put off, no attempt counted (the catalog could not tell, or the
 * webhook changed since it was claimed).
 */
async function mayBeSent(deps: WorkerDeps, delivery: DueDelivery, answers: AccessAnswers): Promise<boolean> {
  const member = delivery.acts_for_member_id;
  let verdict: Verdict = "lost";
  if (delivery.paused_reason) {
    if (await stopDeliveries(deps, delivery)) return false;
  } else if (!member) {
    if (await stopDeliveries(deps, delivery, noMemberRecorded)) return false;
  } else {
    verdict = await mayStillManage(deps, member, delivery.project_id, answers);
    if (verdict === "allowed") return true;
    if (
      verdict === "lost" &&
      (await stopDeliveries(deps, delivery, await lostRightsReason(deps.catalog, member)))
    )
      return false;
  }
  if (verdict === "lost")
    await deps.orm.em
      .fork()
      .execute(
        "update automation.deliveries set next_attempt_at = now() where id = ? and state = 'pending'",
        [delivery.id],
      );
  else {
    deps.logger.warn(
      { deliveryId: delivery.id, webhookId: delivery.webhook_id, projectId: delivery.project_id },
      `could not check a webhook's member with the catalog; trying again in ${recheckSeconds} s`,
    );
    await deps.orm.em.fork().execute(
      `update automation.deliveries set next_attempt_at = now() + make_interval(secs => ?), last_error = ?
       where id = ? and state = 'pending'`,
      [
        recheckSeconds,
        "not sent yet: could not check that its member may still manage webhooks; trying again",
        delivery.id,
      ],
    );
  }
  return false;
}

/** One attempt of one delivery, and its outcome recorded. */
async function attempt(
  deps: WorkerDeps,
  delivery: DueDelivery,
  answers: AccessAnswers = new Map(),
): Promise<void> {
  if (!(await mayBeSent(deps, delivery, answers))) return;
  let code: number | null = null;
  let error = "";
  // One deadline for the whole attempt: resolving the host, connecting, the answer.
  const deadline = AbortSignal.timeout(deps.timeoutMs);
  let problem: string | undefined;
  try {
    delivery.url = openUrl(deps.cipher, delivery.webhook_id, delivery);
    problem = await destinationProblem(deps.destinations, delivery.url, delivery.kind, deadline);
  } catch {
    delivery.url = "";
    problem = "could not be opened (was WEBHOOK_SECRETS_KEY changed?)";
  }
  if (deadline.aborted) error = `no answer within ${deps.timeoutMs} ms`;
  else if (problem) error = `refused: the URL ${problem}`;
  else
    try {
      const timestamp = Math.floor(Date.now() / 1000);
      const secrets = [deps.cipher.open(delivery.secret_sealed, delivery.webhook_id)];
      if (delivery.previous_valid && delivery.previous_secret_sealed)
        secrets.push(deps.cipher.open(delivery.previous_secret_sealed, delivery.webhook_id));
      const response = await deps.guard.fetch(delivery.url, {
        method: "POST",
        redirect: "manual",
        signal: deadline,
        headers: {
          "content-type": "application/json",
          "user-agent": "Testrun-Webhooks/1",
          "webhook-id": delivery.id,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": signatureHeader(secrets, delivery.id, timestamp, delivery.body),
        },
        body: delivery.body,
      });
      code = response.status;
      const text = await readBounded(response as unknown as Response);
      if (code < 200 || code > 299)
        error = `answered ${code}${text ? `: ${oneLine(text).slice(0, 200)}` : ""}`;
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      error =
        (e as Error).name === "TimeoutError"
          ? `no answer within ${deps.timeoutMs} ms`
          : cause?.code === "EGRESS_REFUSED"
            ? "refused: the address is outside what webhooks may reach"
            : oneLine(cause?.message ?? (e as Error).message);
    }
  // Readers below EDITOR read delivery errors: a receiver's answer quoting its URL says nothing of it.
  error = withoutUrl(error, delivery.url);
  const attempts = delivery.attempts + 1;
  const delay = deps.retryDelaysMs[attempts - 1];
  const state = !error ? "delivered" : delay === undefined ? "failed" : "pending";
  await deps.orm.em.fork().execute(
    `update automation.deliveries set state = ?, attempts = ?, last_response_code = ?, last_error = ?, last_attempt_at = now(),
       next_attempt_at = case when ? = 'pending' then now() + make_interval(secs => ?) else null end
     where id = ?`,
    [state, attempts, code, error, state, (delay ?? 0) / 1000, delivery.id],
  );
  // A failed attempt is what a person looks for (a receiver down, a signature rejected); a delivered
  // one is routine. Never the URL, should a message quote it (`error` is without it, above): a
  // Slack webhook's URL is its secret.
  const reason = error;
  const ids = {
    deliveryId: delivery.id,
    webhookId: delivery.webhook_id,
    projectId: delivery.project_id,
    attempts,
  };
  if (!error) deps.logger.debug({ ...ids, status: code }, "webhook delivered");
  else if (state === "pending")
    deps.logger.warn({ ...ids, reason, retryInMs: delay }, "webhook delivery failed; retrying");
  else deps.logger.warn({ ...ids, reason }, "webhook delivery failed; giving up");
}

/** Attempts the due deliveries, `concurrency` at once; answers how many it attempted. */
export async function deliverDue(deps: WorkerDeps): Promise<number> {
  const claimed = await claimDeliveries(deps, deps.concurrency);
  const answers: AccessAnswers = new Map();
  await Promise.all(
    claimed.map((d) =>
      attempt(deps, d, answers).catch((err: unknown) =>
        deps.logger.error({ err, deliveryId: d.id }, "delivery attempt crashed"),
      ),
    ),
  );
  return claimed.length;
}
