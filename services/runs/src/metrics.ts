import type { Orm } from "@testrun/kit";
import {
  cachedReading,
  counter,
  executorGroup,
  gauge,
  type TestKind,
  testKinds,
  testStreams,
} from "@testrun/kit";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { testKindSql } from "./dispatcher.js";

// The runs service's domain metrics (docs/operations.md, "Metrics"). Labels are run statuses,
// test kinds (pools) and repair kinds: bounded, never ids.

export const runsStarted = counter("testrun_runs_started_total", "Runs started (accepted StartRun)");
export const runsFinished = counter<"status">(
  "testrun_runs_finished_total",
  "Runs that reached a final status, by status",
  ["status"],
);
export const testsClaimed = counter<"pool">(
  "testrun_tests_claimed_total",
  "Tests claimed by executors, by pool (the stream's kind: http, browser or spec)",
  ["pool"],
);
export const leaseLapses = counter(
  "testrun_lease_lapses_total",
  "Claims whose lease lapsed (the executor went away or got stuck)",
);
export const attemptsEnded = counter<"status" | "cause" | "kind" | "retried">(
  "testrun_test_attempts_total",
  "Attempts executors reported as ended, by status, cause (empty unless failed), test kind and whether the test was retried for it",
  ["status", "cause", "kind", "retried"],
);
/** What the reconciler repaired (reconciler.ts, store/reconcile.ts). */
export type RepairKind =
  | "redispatched"
  | "skipped_no_executor"
  | "timed_out"
  | "given_up"
  | "start_undone"
  | "refund_retried";
export const reconcilerRepairs = counter<"kind">(
  "testrun_reconciler_repairs_total",
  "Reconciler repairs, by kind",
  ["kind"],
);

/** How long a scrape-time reading of PostgreSQL and Redis is reused: scrapes stay cheap. */
const readingTtlMs = 5_000;

/**
 * The gauges read at scrape time: tests waiting (QUEUED in PostgreSQL, the source of truth) and
 * the oldest one's age per pool, runs overdue, and each stream's pending entries and lag in Redis.
 * One reading (three PostgreSQL aggregates and two Redis round trips) serves every scrape for 5 s.
 */
export function registerQueueGauges(deps: {
  orm: Orm;
  redis: Redis;
  logger: Logger;
  /** Beyond this, a lapsed lease nobody took over is overdue work: the reconciler gives such tests up. */
  dispatchDeadlineMs: number;
  /** WatchRun streams this replica serves. */
  openWatchStreams: () => number;
}): void {
  // Every gauge of the reading waits for it at scrape time; the first scrape of a window reads.
  const collect = () => read();
  const waiting = gauge<"pool">(
    "testrun_tests_waiting",
    "Tests dispatched and not yet claimed, by pool",
    ["pool"],
    collect,
  );
  const oldest = gauge<"pool">(
    "testrun_tests_oldest_waiting_seconds",
    "Age of the oldest test waiting to be claimed, by pool; 0 when none",
    ["pool"],
    collect,
  );
  const overdue = gauge(
    "testrun_runs_overdue",
    "Runs not finished holding a test whose lease lapsed longer than the dispatch deadline ago",
    [],
    collect,
  );
  const pending = gauge<"pool">(
    "testrun_queue_pending_entries",
    "Stream entries delivered to executors and not yet acknowledged (XPENDING), by pool",
    ["pool"],
    collect,
  );
  const lag = gauge<"pool">(
    "testrun_queue_lag_entries",
    "Stream entries not yet delivered to any executor (XINFO GROUPS lag), by pool",
    ["pool"],
    collect,
  );
  gauge("testrun_watch_streams_open", "WatchRun streams open", [], function () {
    this.set(deps.openWatchStreams());
  });

  const read = cachedReading(
    async () => {
      const em = deps.orm.em.fork();
      const [rows, overdueRows, queue] = await Promise.all([
        em.execute<{ kind: TestKind; waiting: number; oldest_seconds: number }[]>(
          `select k.kind, count(*)::int as waiting,
             coalesce(extract(epoch from now() - min(t.queued_at)), 0)::float8 as oldest_seconds
           from runs.test_results t join runs.runs r on r.id = t.run_id
             cross join lateral (select ${testKindSql("t")} as kind) k
           where t.status = 'queued' and r.charge_state = 'charged'
           group by k.kind`,
        ),
        em.execute<{ overdue: number }[]>(
          `select count(distinct t.run_id)::int as overdue from runs.test_results t
           where t.status = 'running' and t.lease_expires_at < now() - ? * interval '1 millisecond'`,
          [deps.dispatchDeadlineMs],
        ),
        Promise.all(testKinds.map((kind) => streamState(deps.redis, kind))),
      ]);
      for (const kind of testKinds) {
        const row = rows.find((candidate) => candidate.kind === kind);
        waiting.set({ pool: kind }, row?.waiting ?? 0);
        oldest.set({ pool: kind }, Number(row?.oldest_seconds ?? 0));
      }
      overdue.set(overdueRows[0]?.overdue ?? 0);
      for (const [index, kind] of testKinds.entries()) {
        pending.set({ pool: kind }, queue[index]?.pending ?? 0);
        lag.set({ pool: kind }, queue[index]?.lag ?? 0);
      }
    },
    readingTtlMs,
    (err) => deps.logger.warn({ err }, "reading the queue's metrics failed"),
  );
}

/** A stream's entries pending in the executors' group, and its lag; zeros before the group exists. */
async function streamState(redis: Redis, kind: TestKind): Promise<{ pending: number; lag: number }> {
  const stream = testStreams[kind];
  const [summary, groups] = await Promise.all([
    redis.xpending(stream, executorGroup).catch(() => [0]),
    redis.xinfo("GROUPS", stream).catch(() => []),
  ]);
  const group = (groups as unknown[][]).find(
    (fields) => fields[fields.indexOf("name") + 1] === executorGroup,
  );
  const lagIndex = group ? group.indexOf("lag") : -1;
  return {
    pending: Number((summary as unknown[])[0] ?? 0),
    lag: group && lagIndex >= 0 ? Number(group[lagIndex + 1] ?? 0) : 0,
  };
}
