// A case's health as the API shows it (health.proto's CaseHealth), from its case_health row: the
// rates and their intervals, the durations and the outcomes are worked out here from the row's
// window (at most HealthSettings.window_results entries), never from the results themselves.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type CaseHealth,
  CaseHealthSchema,
  HealthState,
  type Quarantine,
  QuarantineSchema,
  type RateEstimate,
  RateEstimateSchema,
  type ResultRef,
  ResultRefSchema,
} from "@testrun/gen/testrun/runs/v1/health_pb";
import { dbDate, dbDateOrNull } from "@testrun/kit";
import type { ResultRefRow, HealthState as StoredState } from "../db/entities.js";
import type { CaseHealthRow, QuarantineRow } from "../rows.js";

export const healthStates: Record<StoredState, HealthState> = {
  unknown: HealthState.UNKNOWN,
  stable: HealthState.STABLE,
  flaky: HealthState.FLAKY,
  failing: HealthState.FAILING,
  new_failure: HealthState.NEW_FAILURE,
};

/** z for a 95% interval. */
const z = 1.959964;

/**
 * `count` of `sample` with its 95% Wilson score interval: unlike the normal approximation it stays
 * within 0..1 and is honest about small samples (1 of 3 is 0.06-0.79, not 0.33 ± 0.53).
 */
export function wilson(count: number, sample: number): RateEstimate {
  if (sample <= 0) return create(RateEstimateSchema, { count, sample, rate: 0, low: 0, high: 0 });
  const rate = count / sample;
  const z2n = (z * z) / sample;
  const centre = (rate + z2n / 2) / (1 + z2n);
  const half = (z * Math.sqrt((rate * (1 - rate)) / sample + z2n / (4 * sample))) / (1 + z2n);
  return create(RateEstimateSchema, {
    count,
    sample,
    rate,
    low: Math.max(0, centre - half),
    high: Math.min(1, centre + half),
  });
}

/** The nearest-rank percentile `p` (0..1) of sorted values; 0 for none. */
const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0);
const ascending = (values: number[]) => [...values].sort((a, b) => a - b);

const refOf = (ref: ResultRefRow | null): ResultRef | undefined =>
  ref
    ? create(ResultRefSchema, {
        runId: ref.run,
        testResultId: ref.id,
        caseVersion: ref.v,
        at: timestampFromDate(dbDate(ref.at)),
      })
    : undefined;

export function renderQuarantine(row: QuarantineRow): Quarantine {
  const endedAt = dbDateOrNull(row.ended_at);
  const expiresAt = dbDate(row.expires_at);
  return create(QuarantineSchema, {
    testCaseId: row.test_case_id,
    reason: row.reason,
    startedAt: timestampFromDate(dbDate(row.started_at)),
    expiresAt: timestampFromDate(expiresAt),
    startedByMemberId: row.started_by_member_id ?? undefined,
    endedAt: endedAt ? timestampFromDate(endedAt) : undefined,
    liftedByMemberId: row.lifted_by_member_id ?? undefined,
    active: endedAt === null && expiresAt.getTime() > Date.now(),
  });
}

/** A case's health; `quarantine`: the one lasting now, if any. */
export function renderCaseHealth(
  row: CaseHealthRow,
  quarantine: QuarantineRow | null | undefined,
): CaseHealth {
  const outcomes = row.recent.map((entry) => entry.o);
  // A pass on retry had a failed attempt: it counts as a failure in both rates.
  const failed = outcomes.map((o) => o !== "p");
  const flips = failed.slice(1).filter((f, i) => f !== failed[i]).length;
  const durations = row.recent.flatMap((entry) => (entry.d === null ? [] : [entry.d]));
  const newer = durations.slice(0, Math.ceil(durations.length / 2));
  const older = durations.slice(Math.ceil(durations.length / 2));
  const all = ascending(durations);
  const lasting = quarantine ? renderQuarantine(quarantine) : undefined;
  const judged = healthStates[row.judged];
  return create(CaseHealthSchema, {
    testCaseId: row.test_case_id,
    environmentId: row.environment_id,
    state: lasting?.active ? HealthState.QUARANTINED : judged,
    judged,
    name: row.name,
    caseVersion: row.case_version,
    sampleSize: outcomes.length,
    enoughResults: outcomes.length >= row.min_results,
    failureRate: wilson(failed.filter(Boolean).length, outcomes.length),
    flipRate: wilson(flips, Math.max(0, outcomes.length - 1)),
    failingSince: refOf(row.failing_since),
    lastFailure: refOf(row.last_failure),
    lastResult: refOf(row.last_result),
    medianDurationMs: BigInt(durations.length >= 2 ? percentile(all, 0.5) : 0),
    p90DurationMs: BigInt(durations.length >= 2 ? percentile(all, 0.9) : 0),
    previousMedianDurationMs: BigInt(
      older.length > 0 && newer.length > 0 ? percentile(ascending(older), 0.5) : 0,
    ),
    resultsTotal: BigInt(row.results_total),
    failuresTotal: BigInt(row.failures_total),
    ...(lasting?.active && { quarantine: lasting }),
    outcomes: outcomes.join(""),
  });
}
