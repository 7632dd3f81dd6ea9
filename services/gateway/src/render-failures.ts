import type { Timestamp } from "@bufbuild/protobuf/wkt";
import {
  type CompareRunsResponse,
  type FailureGroup,
  type FailureGroupCase,
  FailureGroupState,
  type FailureOccurrence,
  type StepChange,
  TestChange,
  type TestComparison,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import { causeOf, rfc3339 } from "@testrun/kit/run-json";
import type { z } from "zod";
import type {
  comparisonSchema,
  failureGroupCaseSchema,
  failureGroupSchema,
  failureGroupStates,
  failureOccurrenceSchema,
  stepChangeSchema,
  testChanges,
  testComparisonSchema,
} from "./api/failure-schemas.js";
import { runListJson } from "./render.js";

/**
 * The JSON of failure groups and run comparisons (api/failure-schemas.ts): the runs service's
 * answers in the API's conventions, enums as lower-case names, absent ids and times as null.
 */

type GroupState = (typeof failureGroupStates)[number];
type Change = (typeof testChanges)[number];

const states: Record<FailureGroupState, GroupState | undefined> = {
  [FailureGroupState.UNSPECIFIED]: undefined,
  [FailureGroupState.OPEN]: "open",
  [FailureGroupState.RESOLVED]: "resolved",
  [FailureGroupState.REOPENED]: "reopened",
};

/** The REST state's proto value (the query's `state`). */
export const stateOf = (state: GroupState): FailureGroupState =>
  ({
    open: FailureGroupState.OPEN,
    resolved: FailureGroupState.RESOLVED,
    reopened: FailureGroupState.REOPENED,
  })[state];

const changes: Record<TestChange, Change> = {
  [TestChange.UNSPECIFIED]: "unchanged",
  [TestChange.NEWLY_FAILING]: "newly_failing",
  [TestChange.FIXED]: "fixed",
  [TestChange.STILL_FAILING]: "still_failing",
  [TestChange.FLAKY]: "flaky",
  [TestChange.NEW_TEST]: "new_test",
  [TestChange.REMOVED_TEST]: "removed_test",
  [TestChange.UNCHANGED]: "unchanged",
};

const time = (at: Timestamp | undefined) => rfc3339(at);

export const occurrenceJson = (o: FailureOccurrence): z.output<typeof failureOccurrenceSchema> => ({
  runId: o.runId,
  testResultId: o.testResultId,
  attempt: o.attempt,
  testCaseId: o.testCaseId,
  testCaseName: o.testCaseName,
  caseVersion: o.caseVersion,
  environmentId: o.environmentId,
  at: time(o.at),
  summary: o.summary,
  url: o.url,
});

export const failureGroupJson = (g: FailureGroup): z.output<typeof failureGroupSchema> => ({
  id: g.id,
  fingerprint: g.fingerprint,
  stepKind: g.stepKind === "browser" ? "browser" : "http",
  action: g.action,
  target: g.target,
  // A group holds only failures of the test's own causes, so there is always one.
  cause: causeOf(g.cause) ?? "assertion",
  message: g.message,
  state: states[g.state] ?? "open",
  occurrences: g.occurrences,
  casesAffected: g.casesAffected,
  firstSeen: g.firstSeen?.runId ? occurrenceJson(g.firstSeen) : null,
  lastSeen: g.lastSeen?.runId ? occurrenceJson(g.lastSeen) : null,
  resolvedAt: g.state === FailureGroupState.RESOLVED ? time(g.resolvedAt) : null,
});

export const failureGroupCaseJson = (c: FailureGroupCase): z.output<typeof failureGroupCaseSchema> => ({
  testCaseId: c.testCaseId,
  name: c.name,
  occurrences: c.occurrences,
  lastSeenAt: time(c.lastSeenAt),
  open: c.open,
});

/** A step as the runs service hands it (step.proto's JSON), parsed: clients get an object, not a string. */
function stepOf(json: string): Record<string, unknown> | null {
  if (!json) return null;
  try {
    const value: unknown = JSON.parse(json);
    return value && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

const stepChangeJson = (s: StepChange): z.output<typeof stepChangeSchema> => ({
  number: s.number,
  change: s.change === "added" || s.change === "removed" ? s.change : "changed",
  before: stepOf(s.before),
  after: stepOf(s.after),
});

const statusOrNull = (status: TestStatus) =>
  status === TestStatus.UNSPECIFIED
    ? null
    : (TestStatus[status] as z.output<typeof testComparisonSchema>["status"]);

export const testComparisonJson = (t: TestComparison): z.output<typeof testComparisonSchema> => ({
  testCaseId: t.testCaseId,
  name: t.name,
  change: changes[t.change],
  testResultId: t.testResultId ?? null,
  baseTestResultId: t.baseTestResultId ?? null,
  status: statusOrNull(t.status),
  baseStatus: statusOrNull(t.baseStatus),
  caseVersion: t.caseVersion,
  baseCaseVersion: t.baseCaseVersion,
  stepChanges: t.stepChanges.map(stepChangeJson),
  failingSinceRunId: t.failingSinceRunId ?? null,
  cause: t.status === TestStatus.FAILED ? causeOf(t.cause) : null,
  failureGroupId: t.failureGroupId ?? null,
});

export function comparisonJson(c: CompareRunsResponse): z.output<typeof comparisonSchema> {
  if (!c.run) throw new Error("CompareRuns answered without a run");
  const n = (change: TestChange) => c.counts[change] ?? 0;
  const baseRule = c.baseRule === "named" || c.baseRule === "previous" ? c.baseRule : "none";
  return {
    run: runListJson(c.run),
    base: c.base ? runListJson(c.base) : null,
    baseRule,
    counts: {
      newlyFailing: n(TestChange.NEWLY_FAILING),
      fixed: n(TestChange.FIXED),
      stillFailing: n(TestChange.STILL_FAILING),
      flaky: n(TestChange.FLAKY),
      newTest: n(TestChange.NEW_TEST),
      removedTest: n(TestChange.REMOVED_TEST),
      unchanged: n(TestChange.UNCHANGED),
    },
    tests: c.tests.map(testComparisonJson),
    changes: {
      baseUrl: c.baseUrlBefore || c.baseUrlAfter ? { before: c.baseUrlBefore, after: c.baseUrlAfter } : null,
      variablesAdded: [...c.variablesAdded],
      variablesRemoved: [...c.variablesRemoved],
      casesAdded: [...c.casesAdded],
      casesRemoved: [...c.casesRemoved],
    },
    compareUrl: `${c.run.url}/compare`,
  };
}
