// What `testrun` makes of a run's comparison with its base (issue 41), without a gateway: the last
// line, --fail-on new-failures' exit code, the job summary's part, the option's parsing and the
// Action's input.
import type { RunComparison, TestComparison } from "@testrun/api-client";
import { expect } from "chai";
import { argvOf } from "../src/action.js";
import { parseCommand, UsageError } from "../src/args.js";
import {
  comparisonMarkdown,
  comparisonReport,
  newFailuresOnlyExit,
  unknownComparison,
} from "../src/comparison.js";
import { fakeRun } from "./fake-gateway.js";

const run = fakeRun("FAILED", "run_03");

const entry = (
  name: string,
  change: TestComparison["change"],
  more: Partial<TestComparison> = {},
): TestComparison => ({
  testCaseId: `tc_${name}`,
  name,
  change,
  testResultId: `tr_${name}`,
  baseTestResultId: null,
  status: change === "fixed" || change === "flaky" ? "PASSED" : "FAILED",
  baseStatus: null,
  caseVersion: 1,
  baseCaseVersion: 1,
  stepChanges: [],
  failingSinceRunId: null,
  cause: "assertion",
  failureGroupId: null,
  ...more,
});

const comparison = (tests: TestComparison[], flaky = 0): RunComparison => {
  const { tests: _tests, ...fields } = run;
  const listed = {
    ...fields,
    environmentId: "env_1",
    testPlanId: null,
    createdAt: "2026-11-22T10:15:30.123Z",
  };
  const count = (change: TestComparison["change"]) => tests.filter((t) => t.change === change).length;
  return {
    run: listed,
    base: { ...listed, id: "run_02" },
    baseRule: "previous",
    counts: {
      newlyFailing: count("newly_failing"),
      fixed: count("fixed"),
      stillFailing: count("still_failing"),
      flaky,
      newTest: count("new_test"),
      removedTest: 0,
      unchanged: 0,
    },
    tests,
    changes: { baseUrl: null, variablesAdded: [], variablesRemoved: [], casesAdded: [], casesRemoved: [] },
    compareUrl: `${run.url}/compare`,
  };
};

describe("testrun against the base run", () => {
  it("counts new failures (newly failing, and new tests that failed) and says since the oldest run still failing", () => {
    const report = comparisonReport(
      run,
      comparison(
        [
          entry("a", "newly_failing"),
          entry("b", "new_test"),
          entry("c", "still_failing", { failingSinceRunId: "run_01b" }),
          entry("d", "still_failing", { failingSinceRunId: "run_01a" }),
          entry("e", "fixed"),
        ],
        1,
      ),
    );
    expect(report.line).to.equal(
      `2 new failures, 2 still failing (since run run_01a), 1 flaky, 1 fixed against run run_02 — compare: ${run.url}/compare`,
    );
    expect(report.newFailureNames).to.deep.equal(["a", "b"]);
  });

  it("says when there is no base, and counts every failure as new then", () => {
    const report = comparisonReport(run, { ...comparison([]), base: null, baseRule: "none" });
    expect(report.line).to.equal(`No base run to compare with — ${run.url}`);
    expect(newFailuresOnlyExit(1, run, report)).to.deep.equal({ code: 1 });
    expect(newFailuresOnlyExit(1, run, unknownComparison(run, "HTTP 502"))).to.deep.equal({ code: 1 });
  });

  it("passes a run with only known failures under --fail-on new-failures, with a warning", () => {
    const known = comparisonReport(run, comparison([entry("log in", "still_failing")]));
    const decided = newFailuresOnlyExit(1, run, known);
    expect(decided.code).to.equal(0);
    expect(decided.warning).to.equal(
      "Warning: 1 test failed, none of them new against the base run: exit 0 (--fail-on new-failures)",
    );
    // A skipped run keeps its code whatever the comparison says.
    expect(newFailuresOnlyExit(2, fakeRun("SKIPPED"), known)).to.deep.equal({ code: 2 });
  });

  it("lists at most 20 new failures in the job summary, their names escaped", () => {
    const many = Array.from({ length: 23 }, (_, i) => entry(`t|${i}`, "newly_failing"));
    const markdown = comparisonMarkdown(comparisonReport(run, comparison(many)));
    expect(markdown).to.contain(`([compare](${run.url}/compare))`);
    expect(markdown).to.contain("- t\\|0\n");
    expect(markdown).not.to.contain("- t\\|20\n");
    expect(markdown).to.contain("- … and 3 more");
  });

  it("takes --fail-on new-failures, refuses other values and --no-wait, and the Action passes its input", () => {
    const parsed = parseCommand(["run", "--plan", "Smoke", "--fail-on", "new-failures"]);
    expect(parsed).to.include({ failOn: "new-failures" });
    expect(() => parseCommand(["run", "--plan", "Smoke", "--fail-on", "flaky"])).to.throw(
      UsageError,
      /only value is new-failures/,
    );
    expect(() => parseCommand(["run", "--plan", "Smoke", "--no-wait", "--fail-on", "new-failures"])).to.throw(
      UsageError,
      "--fail-on has no use with --no-wait",
    );
    expect(argvOf({ INPUT_PLAN: "Smoke", "INPUT_FAIL-ON": "new-failures" })).to.deep.equal([
      "run",
      "--plan",
      "Smoke",
      "--fail-on",
      "new-failures",
    ]);
  });
});
