// Webhook payloads follow the REST run (docs/automation.md, "Payload"): a run with a test that
// passed on retry and one that failed with a cause carries flakyTests, flaky, cause and attempts
// in its STANDARD body exactly as GET /v1/runs/{id} shows them.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  FailureCause,
  RunSchema,
  RunStatus,
  TestAttemptSchema,
  TestResultSchema,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import { runJson } from "@testrun/kit/run-json";
import { expect } from "chai";
import { slackBody, standardBody } from "../src/payload.js";

const apiUrl = "https://api.testrun.example";
const at = (second: number) => timestampFromDate(new Date(Date.UTC(2026, 10, 28, 12, 0, second)));

describe("webhook payload of a run with retried tests", () => {
  it("carries the run's flakyTests and each test's flaky, cause and attempts as REST does; Slack counts the flaky", () => {
    const attempt = (number: number, status: TestStatus, cause = FailureCause.UNSPECIFIED) =>
      create(TestAttemptSchema, {
        number,
        status,
        cause,
        startedAt: at(number),
        finishedAt: at(number + 1),
        durationMs: 1000n,
        executorId: `executor-${number}`,
      });
    const run = create(RunSchema, {
      id: "run_1",
      name: "nightly",
      status: RunStatus.FAILED,
      finished: true,
      totalTests: 2,
      passedTests: 1,
      failedTests: 1,
      flakyTests: 1,
      tests: [
        create(TestResultSchema, {
          id: "tr_1",
          runId: "run_1",
          name: "checkout",
          status: TestStatus.PASSED,
          flaky: true,
          retries: 1,
          attempts: [attempt(1, TestStatus.FAILED, FailureCause.NETWORK), attempt(2, TestStatus.PASSED)],
        }),
        create(TestResultSchema, {
          id: "tr_2",
          runId: "run_1",
          name: "search",
          status: TestStatus.FAILED,
          cause: FailureCause.TIMEOUT,
          retries: 1,
          attempts: [
            attempt(1, TestStatus.FAILED, FailureCause.TIMEOUT),
            attempt(2, TestStatus.FAILED, FailureCause.TIMEOUT),
          ],
        }),
      ],
    });
    const body = JSON.parse(standardBody({ type: "run.failed", timestamp: new Date(0), run }, apiUrl)) as {
      data: { run: ReturnType<typeof runJson> };
    };
    expect(body.data.run).to.deep.equal(JSON.parse(JSON.stringify(runJson(run, apiUrl))));
    expect(body.data.run.flakyTests).to.equal(1);
    const [flaky, failed] = body.data.run.tests;
    expect(flaky).to.include({ flaky: true, cause: null });
    expect(flaky?.attempts.map((a) => [a.status, a.cause, a.executor])).to.deep.equal([
      ["FAILED", "network", "executor-1"],
      ["PASSED", null, "executor-2"],
    ]);
    expect(failed).to.include({ flaky: false, cause: "timeout" });
    expect(failed?.attempts.map((a) => a.cause)).to.deep.equal(["timeout", "timeout"]);

    // Slack says how many of the passed tests passed only on retry.
    const slack = JSON.parse(
      slackBody({ type: "run.failed", timestamp: new Date(0), run }, { environment: "staging" }),
    );
    expect(slack.text).to.match(/^Run "nightly" failed: 1 passed \(1 flaky\), 1 failed of 2 /);
    expect(JSON.stringify(slack.blocks)).to.contain("1 passed (1 flaky), 1 failed, 0 skipped");
  });
});
