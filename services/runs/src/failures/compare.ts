// A run compared with its base (CompareRuns; docs/rest-api.md, "Comparing runs"): per test case,
// what changed between the two (newly failing, fixed, still failing, flaky, new, removed), and
// around them (case versions with the steps' differences, the base URL, the variables' names, the
// plan's cases). Both runs are bounded (500 tests each), so this is linear in bounded sizes.
import { create } from "@bufbuild/protobuf";
import {
  StepChangeSchema,
  TestChange,
  type TestComparison,
  TestComparisonSchema,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import { failureCauses } from "../causes.js";
import { testStatuses } from "../render.js";
import type { RunWithTests, TestRow } from "../rows.js";

/** The order differences are listed in; unchanged tests last. */
const changeOrder = [
  TestChange.NEWLY_FAILING,
  TestChange.FIXED,
  TestChange.FLAKY,
  TestChange.STILL_FAILING,
  TestChange.NEW_TEST,
  TestChange.REMOVED_TEST,
  TestChange.UNCHANGED,
];

function changeOf(test: TestRow | undefined, base: TestRow | undefined): TestChange {
  if (!test) return TestChange.REMOVED_TEST;
  if (!base) return TestChange.NEW_TEST;
  if (test.status === "failed")
    return base.status === "failed" ? TestChange.STILL_FAILING : TestChange.NEWLY_FAILING;
  if (test.status === "passed" && test.flaky) return TestChange.FLAKY;
  if (test.status === "passed" && base.status === "failed") return TestChange.FIXED;
  return TestChange.UNCHANGED;
}

/** How the steps of two snapshots differ, step by step (a step is its JSON). */
function stepChanges(before: unknown[], after: unknown[]) {
  const changes = [];
  for (let i = 0; i < Math.max(before.length, after.length); i++) {
    const b = before[i] === undefined ? "" : JSON.stringify(before[i]);
    const a = after[i] === undefined ? "" : JSON.stringify(after[i]);
    if (a === b) continue;
    changes.push(
      create(StepChangeSchema, {
        number: i + 1,
        change: !b ? "added" : !a ? "removed" : "changed",
        before: b,
        after: a,
      }),
    );
  }
  return changes;
}

export interface Comparison {
  tests: TestComparison[];
  counts: Record<number, number>;
  casesAdded: string[];
  casesRemoved: string[];
}

/** `failingSince`: where each case's current failures began in the run's environment (case_health). */
export function compareRuns(
  run: RunWithTests,
  base: RunWithTests | undefined,
  failingSince: Map<string, string>,
): Comparison {
  const baseByCase = new Map((base?.tests ?? []).map((test) => [test.test_case_id, test]));
  const runCases = new Set(run.tests.map((test) => test.test_case_id));
  const rows: { change: TestChange; position: number; comparison: TestComparison }[] = [];
  const row = (test: TestRow | undefined, baseTest: TestRow | undefined, position: number) => {
    const change = base ? changeOf(test, baseTest) : TestChange.UNCHANGED;
    const either = (test ?? baseTest) as TestRow;
    rows.push({
      change,
      position,
      comparison: create(TestComparisonSchema, {
        testCaseId: either.test_case_id,
        name: either.name,
        change,
        ...(test && { testResultId: test.id }),
        ...(baseTest && { baseTestResultId: baseTest.id }),
        status: test ? testStatuses[test.status] : TestStatus.UNSPECIFIED,
        baseStatus: baseTest ? testStatuses[baseTest.status] : TestStatus.UNSPECIFIED,
        caseVersion: test?.test_case_version ?? 0,
        baseCaseVersion: baseTest?.test_case_version ?? 0,
        stepChanges: test && baseTest ? stepChanges(baseTest.steps, test.steps) : [],
        ...(change === TestChange.STILL_FAILING &&
          failingSince.has(either.test_case_id) && {
            failingSinceRunId: failingSince.get(either.test_case_id),
          }),
        cause: test?.status === "failed" && test.cause ? failureCauses[test.cause] : 0,
        ...(test?.failure_group_id && { failureGroupId: test.failure_group_id }),
      }),
    });
  };
  for (const test of run.tests) row(test, baseByCase.get(test.test_case_id), test.position);
  for (const baseTest of base?.tests ?? [])
    if (!runCases.has(baseTest.test_case_id)) row(undefined, baseTest, run.tests.length + baseTest.position);
  rows.sort(
    (a, b) => changeOrder.indexOf(a.change) - changeOrder.indexOf(b.change) || a.position - b.position,
  );
  const counts: Record<number, number> = {};
  for (const { change } of rows) counts[change] = (counts[change] ?? 0) + 1;
  return {
    tests: rows.map((r) => r.comparison),
    counts,
    casesAdded: base
      ? run.tests.filter((t) => !baseByCase.has(t.test_case_id)).map((t) => t.test_case_id)
      : [],
    casesRemoved: (base?.tests ?? []).filter((t) => !runCases.has(t.test_case_id)).map((t) => t.test_case_id),
  };
}
