// How the console words a failure group (docs/console.md, "Failures"): its state, the step it
// failed at ("HTTP GET /api/orders/{n}"), how often it was seen ("seen 14 times in 6 cases") and
// the state filter of the Failures page.
import { type FailureGroup, FailureGroupState } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { count, type Tone } from "../../format";

export const groupStateName: Record<FailureGroupState, string> = {
  [FailureGroupState.UNSPECIFIED]: "Unknown",
  [FailureGroupState.OPEN]: "Open",
  [FailureGroupState.RESOLVED]: "Resolved",
  [FailureGroupState.REOPENED]: "Reopened",
};

export const groupStateTone: Record<FailureGroupState, Tone> = {
  [FailureGroupState.UNSPECIFIED]: "neutral",
  [FailureGroupState.OPEN]: "bad",
  [FailureGroupState.RESOLVED]: "good",
  [FailureGroupState.REOPENED]: "bad",
};

/**
 * The Failures page's state filter, in the URL (`?state=resolved`): ListFailureGroups' default (no
 * states) is the open and reopened groups.
 */
export const stateFilters = [
  { param: "", label: "Open and reopened", states: [] as FailureGroupState[] },
  { param: "resolved", label: "Resolved", states: [FailureGroupState.RESOLVED] },
  {
    param: "all",
    label: "Any state",
    states: [FailureGroupState.OPEN, FailureGroupState.REOPENED, FailureGroupState.RESOLVED],
  },
] as const;

/** The step it failed at: "HTTP GET /api/orders/{n}", "Browser click role=button[name=Buy]". */
export function stepText(group: Pick<FailureGroup, "stepKind" | "action" | "target">): string {
  const kind = group.stepKind === "http" ? "HTTP" : group.stepKind === "browser" ? "Browser" : group.stepKind;
  return [kind, group.action, group.target].filter(Boolean).join(" ");
}

/** "seen 14 times in 6 cases", "seen once in 1 case". */
export function seenText(occurrences: number, cases: number): string {
  const times = occurrences === 1 ? "once" : `${count(occurrences)} times`;
  return `seen ${times} in ${count(cases)} ${cases === 1 ? "case" : "cases"}`;
}
