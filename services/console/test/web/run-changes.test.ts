// The run page's handling of WatchRun's changes (services/console/web/src/run-changes.ts): a change
// applies to the run the page shows only when it names that run's version; otherwise the page reads
// the whole run again.
import { create } from "@bufbuild/protobuf";
import { RunDetailsSchema, WatchRunResponseSchema } from "@testrun/gen/testrun/console/v1/console_pb";
import { RunSchema, RunStatus, TestResultSchema, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { expect } from "chai";
import { applyWatchMessage } from "../../web/src/features/runs/run-changes.js";

const test = (id: string, status: TestStatus) => create(TestResultSchema, { id, name: id, status });
const shown = create(RunDetailsSchema, {
  environmentName: "staging",
  run: create(RunSchema, {
    id: "run_1",
    status: RunStatus.RUNNING,
    version: 4n,
    tests: [test("tr_a", TestStatus.RUNNING), test("tr_b", TestStatus.QUEUED)],
  }),
});

describe("console run page: applying WatchRun's changes", () => {
  it("replaces the changed tests and the run's own fields, keeping the others and the names", () => {
    const next = applyWatchMessage(
      shown,
      create(WatchRunResponseSchema, {
        sinceVersion: 4n,
        change: create(RunSchema, {
          id: "run_1",
          status: RunStatus.RUNNING,
          passedTests: 1,
          version: 6n,
          tests: [test("tr_a", TestStatus.PASSED)],
        }),
      }),
    );
    if (next === "resync" || !next) throw new Error(`not applied: ${next}`);
    expect(next.environmentName).to.equal("staging");
    expect(next.run?.version).to.equal(6n);
    expect(next.run?.passedTests).to.equal(1);
    expect(next.run?.tests.map((t) => [t.id, t.status])).to.deep.equal([
      ["tr_a", TestStatus.PASSED],
      ["tr_b", TestStatus.QUEUED],
    ]);
  });

  it("reads the whole run again when a change does not apply to the version shown (one was missed)", () => {
    const missed = create(WatchRunResponseSchema, {
      sinceVersion: 5n,
      change: create(RunSchema, { id: "run_1", version: 7n, tests: [test("tr_b", TestStatus.RUNNING)] }),
    });
    expect(applyWatchMessage(shown, missed)).to.equal("resync");
    // Nothing shown yet: a change cannot apply either.
    expect(applyWatchMessage(undefined, missed)).to.equal("resync");
  });

  it("reads the whole run again when it finishes with a base, for the tests marked as new failures", () => {
    const finishing = (baseRunId?: string) =>
      create(WatchRunResponseSchema, {
        sinceVersion: 4n,
        change: create(RunSchema, {
          id: "run_1",
          status: RunStatus.FAILED,
          finished: true,
          version: 6n,
          ...(baseRunId && { baseRunId, newFailures: 1 }),
          tests: [test("tr_b", TestStatus.FAILED)],
        }),
      });
    expect(applyWatchMessage(shown, finishing("run_0"))).to.equal("resync");
    // Without a base nothing else changed: the change applies.
    const applied = applyWatchMessage(shown, finishing());
    if (applied === "resync" || !applied) throw new Error(`not applied: ${applied}`);
    expect(applied.run?.finished).to.equal(true);
  });

  it("shows a whole run as it comes", () => {
    const whole = create(RunDetailsSchema, { run: create(RunSchema, { id: "run_1", version: 9n }) });
    expect(applyWatchMessage(shown, create(WatchRunResponseSchema, { run: whole }))).to.equal(whole);
  });
});
