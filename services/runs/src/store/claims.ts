// ClaimTests: several claims in one call (an executor asks for as many tests as it has free slots).
// Each claim ends as ClaimTest's would (leases.ts); the tests of one run are claimed together, in
// one transaction that locks the run, then its tests (locking.ts), and one statement takes all of
// their leases. Runs are taken one transaction at a time, so no lock is held across two runs.
import { randomBytes } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import { dbDate, type Orm } from "@testrun/kit";
import { slotsLeft } from "../fair-share.js";
import { type RunRow, type TestRow, testColumns } from "../rows.js";
import { dropUnfinishedUploads } from "./artifacts.js";
import { withLostAttempt } from "./attempts.js";
import type { ClaimOutcome, Timing } from "./lease-outcomes.js";
import { lockRun, transaction } from "./locking.js";
import { type Effects, giveUp } from "./settle.js";

/** A PostgreSQL array literal of texts, for a `?::text[]` parameter (an array would be expanded into a list). */
export function textArray(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`).join(",")}}`;
}

export interface ClaimRequest {
  testResultId: string;
  executorId: string;
}

/** What one transaction (one run's claims) left to do once committed, besides the claims' outcomes. */
export interface BatchEffects {
  runId: string;
  /** A test was claimed: the run changed (its watchers are told). */
  claimed: boolean;
  /** Tests failed for their last lapse (gave_up outcomes), with what that left to do. */
  gaveUp: Effects[];
}

/** Answers one outcome per claim, in the claims' order, and what each run's transaction left to do. */
export async function claimTests(
  orm: Orm,
  timing: Timing,
  claims: readonly ClaimRequest[],
): Promise<{ outcomes: ClaimOutcome[]; runs: BatchEffects[] }> {
  const outcomes = new Map<string, ClaimOutcome>();
  const runs: BatchEffects[] = [];
  // One transaction per run: the run of the first claim left, and whichever of the claims left
  // are its tests (usually all of them: an executor reads a backlog in order).
  // The usual case in one round trip (Migration20261128160000_lease_functions): tests never
  // claimed, of one run, within the project's share. What it leaves goes through the transactions below.
  const [fast] = await orm.em
    .fork()
    .execute<{ claimed: { run: RunRow; tests: TestRow[] } | null }[]>(
      "select runs.claim_new_tests(?::text[], ?::text[], ?::text[], ?, ?) as claimed",
      [
        textArray(claims.map((claim) => claim.testResultId)),
        textArray(claims.map((claim) => claim.executorId)),
        textArray(claims.map(() => randomBytes(18).toString("base64url"))),
        timing.leaseMs,
        timing.maxRunningPerProject ?? 0,
      ],
    );
  if (fast?.claimed && fast.claimed.tests.length > 0) {
    const { run, tests } = fast.claimed;
    for (const test of tests) outcomes.set(test.id, { kind: "claimed", run, test, tookOverLapsed: false });
    runs.push({ runId: run.id, claimed: true, gaveUp: [] });
  }
  let left = claims.filter((claim) => !outcomes.has(claim.testResultId));
  while (left.length > 0) {
    const done = await transaction<{ outcomes: Map<string, ClaimOutcome>; effects?: BatchEffects }>(
      orm,
      (em) => claimInRun(em, timing, left),
    );
    for (const [id, outcome] of done.outcomes) outcomes.set(id, outcome);
    if (done.effects) runs.push(done.effects);
    left = left.filter((claim) => !outcomes.has(claim.testResultId));
  }
  return {
    outcomes: claims.map((claim) => outcomes.get(claim.testResultId) ?? { kind: "not_found" }),
    runs,
  };
}

// Taking a lapsed lease over (the test still RUNNING) ends its attempt as EXECUTOR_LOST.
const leaseColumns = (params: { owner: string; token: string }) =>
  `status = 'running', attempt = t.attempt + 1, lapsed_leases = t.lapsed_leases + (t.status = 'running')::int,
   earlier_attempts = case when t.status = 'running' then ${withLostAttempt} else t.earlier_attempts end,
   lease_owner = ${params.owner}, lease_token = ${params.token},
   lease_expires_at = now() + ? * interval '1 millisecond', started_at = now()`;

/**
 * The claims among `claims` of the first one's run, in one transaction; answers an outcome for
 * each of them (at least the first), none for the others.
 */
async function claimInRun(
  em: EntityManager,
  timing: Timing,
  claims: readonly ClaimRequest[],
): Promise<{ outcomes: Map<string, ClaimOutcome>; effects?: BatchEffects }> {
  const outcomes = new Map<string, ClaimOutcome>();
  const first = claims[0]?.testResultId ?? "";
  const run = await lockRun(em, "r.id = (select run_id from runs.test_results where id = ?)", [first]);
  if (!run) return { outcomes: new Map([[first, { kind: "not_found" }]]) };
  const effects: BatchEffects = { runId: run.id, claimed: false, gaveUp: [] };
  const maxRunning = timing.maxRunningPerProject ?? 0;
  const tokens = claims.map(() => randomBytes(18).toString("base64url"));
  const claimedAs = (test: TestRow, tookOverLapsed: boolean): ClaimOutcome => ({
    kind: "claimed",
    run,
    test,
    tookOverLapsed,
  });

  // The usual case, in one statement: QUEUED tests, the project within its share with all of them.
  let unsettled = claims;
  if ((await slotsLeft(em, run.project_id, maxRunning, claims.length)) === claims.length) {
    const claimed = await em.execute<TestRow[]>(
      `update runs.test_results t set ${leaseColumns({ owner: "c.owner", token: "c.token" })}
       from unnest(?::text[], ?::text[], ?::text[]) as c(id, owner, token)
       where t.id = c.id and t.run_id = ? and t.status = 'queued' returning ${testColumns}`,
      [
        timing.leaseMs,
        textArray(claims.map((claim) => claim.testResultId)),
        textArray(claims.map((claim) => claim.executorId)),
        textArray(tokens),
        run.id,
      ],
    );
    for (const test of claimed) {
      // A test QUEUED again after a claim (retried, handed back).
      if (test.attempt > 1) await dropUnfinishedUploads(em, test.id);
      outcomes.set(test.id, claimedAs(test, false));
    }
    effects.claimed = claimed.length > 0;
    unsettled = claims.filter((claim) => !outcomes.has(claim.testResultId));
    if (unsettled.length === 0) return { outcomes, effects };
  }

  // The rest, test by test as ClaimTest decides (the tests of other runs are left for later).
  const tests = await em.execute<(TestRow & { lapsed: boolean })[]>(
    `select ${testColumns}, t.status = 'running' and t.lease_expires_at < now() as lapsed
     from runs.test_results t where t.id = any(?::text[]) and t.run_id = ? order by t.id for update`,
    [textArray(unsettled.map((claim) => claim.testResultId)), run.id],
  );
  const byId = new Map(tests.map((test) => [test.id, test]));
  if (!byId.has(first) && !outcomes.has(first)) outcomes.set(first, { kind: "not_found" });
  // New claims (QUEUED) within the project's fair share, and lapsed leases taken over (never
  // refused for the share: they replace a slot the project held).
  const fresh: ClaimRequest[] = [];
  const takeOvers: ClaimRequest[] = [];
  for (const claim of unsettled) {
    const test = byId.get(claim.testResultId);
    if (!test) continue;
    if (test.status === "queued") fresh.push(claim);
    else if (test.status !== "running") outcomes.set(test.id, { kind: "final" });
    else if (!test.lapsed) outcomes.set(test.id, { kind: "lease_held" });
    else if (test.lapsed_leases + 1 >= timing.maxAttempts) {
      // The last allowed lapse fails the test (committed with the claims).
      const gaveUp = await giveUp(em, test);
      effects.gaveUp.push(gaveUp);
      outcomes.set(test.id, { kind: "gave_up", runId: run.id, effects: gaveUp });
    } else takeOvers.push(claim);
  }
  const allowed = await slotsLeft(em, run.project_id, maxRunning, fresh.length);
  const deferred = fresh.slice(allowed);
  if (deferred.length > 0) {
    // As ClaimTest's over_share: published again REPUBLISH_AFTER_MS from now (leases.ts says why).
    await em.execute(
      "update runs.test_results set published_at = now(), publish_count = 0 where id = any(?::text[])",
      [textArray(deferred.map((claim) => claim.testResultId))],
    );
    for (const claim of deferred) outcomes.set(claim.testResultId, { kind: "over_share" });
  }
  const taking = [...fresh.slice(0, allowed), ...takeOvers];
  if (taking.length > 0) {
    const claimed = await em.execute<TestRow[]>(
      `update runs.test_results t set ${leaseColumns({ owner: "c.owner", token: "c.token" })}
       from unnest(?::text[], ?::text[], ?::text[]) as c(id, owner, token)
       where t.id = c.id returning ${testColumns}`,
      [
        timing.leaseMs,
        textArray(taking.map((claim) => claim.testResultId)),
        textArray(taking.map((claim) => claim.executorId)),
        textArray(taking.map(() => randomBytes(18).toString("base64url"))),
      ],
    );
    for (const test of claimed) {
      const before = byId.get(test.id);
      if ((before?.attempt ?? 0) > 0) await dropUnfinishedUploads(em, test.id);
      outcomes.set(test.id, claimedAs(test, before?.status === "running"));
    }
    effects.claimed ||= claimed.length > 0;
  }
  return { outcomes, effects };
}

/**
 * HeartbeatLeases: extends every lease named whose token is still the test's current claim (the
 * test RUNNING, its run charged), in one statement, as HeartbeatTest extends one (also after the
 * lease lapsed, as long as nobody took the test over). A lease whose test is locked meanwhile (a
 * completion or a cancel under way) is skipped rather than waited for: it is not reported lost
 * unless it no longer is the current claim, and the next beat extends it. Answers the new expiry
 * and the tests whose lease is lost.
 */
export async function heartbeatLeases(
  orm: Orm,
  leaseMs: number,
  leases: readonly { testResultId: string; leaseToken: string }[],
): Promise<{ leaseExpiresAt: Date; lost: string[] }> {
  const em = orm.em.fork();
  const ids = textArray(leases.map((lease) => lease.testResultId));
  const tokens = textArray(leases.map((lease) => lease.leaseToken));
  const current = (lock: string) =>
    `select t.id from runs.test_results t
     join unnest(?::text[], ?::text[]) as l(id, token) on t.id = l.id
     join runs.runs r on r.id = t.run_id
     where t.lease_token = l.token and t.status = 'running' and r.charge_state = 'charged' ${lock}`;
  const extended = await em.execute<{ id: string; lease_expires_at: string | Date }[]>(
    `with mine as (${current("order by t.id for update of t skip locked")})
     update runs.test_results t set lease_expires_at = now() + ? * interval '1 millisecond'
     from mine where t.id = mine.id returning t.id, t.lease_expires_at`,
    [ids, tokens, leaseMs],
  );
  const kept = new Set(extended.map((row) => row.id));
  if (kept.size < leases.length) {
    for (const row of await em.execute<{ id: string }[]>(current(""), [ids, tokens])) kept.add(row.id);
  }
  const expiry = extended[0]?.lease_expires_at;
  return {
    leaseExpiresAt: expiry ? dbDate(expiry) : new Date(Date.now() + leaseMs),
    lost: leases.map((lease) => lease.testResultId).filter((id) => !kept.has(id)),
  };
}
