import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import {
  type CaseHealth,
  HealthState,
  type Quarantine,
  type RateEstimate,
  type ResultRef,
} from "@testrun/gen/testrun/runs/v1/health_pb";

/**
 * A test case's health and quarantine as /v1 shows them (docs/rest-api.md, "Test health and
 * quarantine"): on a test result (`health`) and in a case's history. Beside run-json.ts, which
 * renders a test result's health with this, so the gateway and the webhooks say the same.
 */

const at = (timestamp: Timestamp | undefined): string | null =>
  timestamp ? timestampDate(timestamp).toISOString() : null;

export type HealthStateName = "unknown" | "stable" | "flaky" | "failing" | "new_failure" | "quarantined";

const stateNames: Record<HealthState, HealthStateName> = {
  // Never returned (health.proto); read as not judged yet rather than failing a read.
  [HealthState.UNSPECIFIED]: "unknown",
  [HealthState.UNKNOWN]: "unknown",
  [HealthState.STABLE]: "stable",
  [HealthState.FLAKY]: "flaky",
  [HealthState.FAILING]: "failing",
  [HealthState.NEW_FAILURE]: "new_failure",
  [HealthState.QUARANTINED]: "quarantined",
};

export const healthStateName = (state: HealthState): HealthStateName => stateNames[state] ?? "unknown";

/** A rate with its 95% Wilson interval; numbers rounded to 4 places (what a rate can say). */
const rateJson = (rate: RateEstimate | undefined) => {
  const round = (value: number) => Math.round(value * 10_000) / 10_000;
  return {
    count: rate?.count ?? 0,
    sample: rate?.sample ?? 0,
    rate: round(rate?.rate ?? 0),
    low: round(rate?.low ?? 0),
    high: round(rate?.high ?? 0),
  };
};

export const resultRefJson = (ref: ResultRef | undefined) =>
  ref?.testResultId
    ? { runId: ref.runId, testResultId: ref.testResultId, caseVersion: ref.caseVersion, at: at(ref.at) }
    : null;

export const quarantineJson = (quarantine: Quarantine) => ({
  testCaseId: quarantine.testCaseId,
  reason: quarantine.reason,
  startedAt: at(quarantine.startedAt),
  expiresAt: at(quarantine.expiresAt),
  startedByMemberId: quarantine.startedByMemberId ?? null,
  endedAt: at(quarantine.endedAt),
  liftedByMemberId: quarantine.liftedByMemberId ?? null,
  active: quarantine.active,
});

/** A test case's health in one environment. */
export const caseHealthJson = (health: CaseHealth) => ({
  testCaseId: health.testCaseId,
  environmentId: health.environmentId,
  name: health.name,
  state: healthStateName(health.state),
  judged: healthStateName(health.judged),
  caseVersion: health.caseVersion,
  sampleSize: health.sampleSize,
  enoughResults: health.enoughResults,
  failureRate: rateJson(health.failureRate),
  flipRate: rateJson(health.flipRate),
  failingSince: resultRefJson(health.failingSince),
  lastFailure: resultRefJson(health.lastFailure),
  lastResult: resultRefJson(health.lastResult),
  medianDurationMs: Number(health.medianDurationMs),
  p90DurationMs: Number(health.p90DurationMs),
  previousMedianDurationMs: Number(health.previousMedianDurationMs),
  resultsTotal: Number(health.resultsTotal),
  failuresTotal: Number(health.failuresTotal),
  outcomes: health.outcomes,
  quarantine: health.quarantine ? quarantineJson(health.quarantine) : null,
});
