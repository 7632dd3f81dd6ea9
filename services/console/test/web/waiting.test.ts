// What the console's run and test pages say of a test that waits (services/console/web/src/
// format.ts waitingText): for an executor, or, when the runs service knows none here can run it
// (TestResult.waiting_for), for one that can, and why none does.
import { create } from "@bufbuild/protobuf";
import { TestResultSchema, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { expect } from "chai";
import { waitingText } from "../../web/src/format.js";

describe("console: what a waiting test waits for", () => {
  it("says a queued test waits for an executor", () => {
    expect(waitingText(create(TestResultSchema, { status: TestStatus.QUEUED }))).to.equal(
      "Waiting for an executor",
    );
  });

  it("says which executor, and why none here can run it, when the runs service knows", () => {
    const test = create(TestResultSchema, {
      status: TestStatus.QUEUED,
      waitingFor:
        "an executor that can run browser tests: the browser is not installed (no file at CHROMIUM_PATH)",
    });
    expect(waitingText(test)).to.equal(
      "Waiting for an executor that can run browser tests: the browser is not installed (no file at CHROMIUM_PATH)",
    );
  });

  it("says nothing of a test that runs or has ended", () => {
    for (const status of [TestStatus.RUNNING, TestStatus.PASSED, TestStatus.SKIPPED])
      expect(waitingText(create(TestResultSchema, { status, waitingFor: "stale" }))).to.equal("");
  });
});
