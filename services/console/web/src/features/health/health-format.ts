// How the console words a test case's health (docs/console.md, "Test health"): the state's name and
// tone, a rate with its 95% Wilson interval ("4 of 30 failed (5–31%)"), and the short text a run's
// page shows beside a test's result.
import { type CaseHealth, HealthState, type RateEstimate } from "@testrun/gen/testrun/runs/v1/health_pb";
import { count, type Tone } from "../../format";

export const healthStateName: Record<HealthState, string> = {
  [HealthState.UNSPECIFIED]: "Unknown",
  [HealthState.UNKNOWN]: "Unknown",
  [HealthState.STABLE]: "Stable",
  [HealthState.FLAKY]: "Flaky",
  [HealthState.FAILING]: "Failing",
  [HealthState.NEW_FAILURE]: "New failure",
  [HealthState.QUARANTINED]: "Quarantined",
};

export const healthStateTone: Record<HealthState, Tone> = {
  [HealthState.UNSPECIFIED]: "neutral",
  [HealthState.UNKNOWN]: "neutral",
  [HealthState.STABLE]: "good",
  [HealthState.FLAKY]: "waiting",
  [HealthState.FAILING]: "bad",
  [HealthState.NEW_FAILURE]: "bad",
  [HealthState.QUARANTINED]: "active",
};

/** The states by impact, as ListTestHealth orders them (the health page's filter and counts). */
export const statesByImpact = [
  HealthState.QUARANTINED,
  HealthState.FAILING,
  HealthState.NEW_FAILURE,
  HealthState.FLAKY,
  HealthState.UNKNOWN,
  HealthState.STABLE,
] as const;

const percent = (x: number) => Math.round(x * 100);

/** "4 of 30 failed (5–31%)": the count, the sample and the 95% Wilson interval. */
export function rateText(rate: RateEstimate | undefined, what: string): string {
  if (!rate || rate.sample === 0) return "no results yet";
  return `${count(rate.count)} of ${count(rate.sample)} ${what} (${percent(rate.low)}–${percent(rate.high)}%)`;
}

/**
 * What a run's page says beside a test's result: "quarantined", "new failure", "known flaky: 4 of
 * 30 failed", "failing"; nothing for a stable or unknown case (the result says it all).
 */
export function healthNote(health: CaseHealth | undefined, quarantined: boolean): string {
  if (quarantined || health?.state === HealthState.QUARANTINED) return "quarantined";
  if (!health) return "";
  const failed = health.failureRate;
  switch (health.state) {
    case HealthState.NEW_FAILURE:
      return "new failure";
    case HealthState.FAILING:
      return "failing";
    case HealthState.FLAKY:
      return failed ? `known flaky: ${count(failed.count)} of ${count(failed.sample)} failed` : "known flaky";
    default:
      return "";
  }
}
