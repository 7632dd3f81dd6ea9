// How /v1 shows a Playwright spec test's step results (docs/rest-api.md, "stepResults"): one per
// test(), named, the failed one with its error, a skipped one SKIPPED, the ones after a failure
// listed too; checked against the OpenAPI document.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  FailureCause,
  RunSchema,
  RunStatus,
  StepResultSchema,
  TestResultSchema,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import { expect } from "chai";
import { expectDocumented } from "../../../test/openapi-check.js";
import { runJson } from "../src/render.js";

const origin = "https://api.testrun.example";
const runId = "run_01jd3k6a0b1c2d3e4f5g6h7j8k";
const testId = "tr_01jd3k6a0b1c2d3e4f5g6h7j8m";
const at = (second: number) => timestampFromDate(new Date(Date.UTC(2026, 10, 28, 12, 0, second)));

describe("REST rendering of a Playwright spec test's step results", () => {
  it("names each test(), gives the failed one's error, and null for both on a steps test's step", () => {
    const step = (number: number, status: TestStatus, name: string, error = "") =>
      create(StepResultSchema, { number, status, durationMs: 100n, name, error });
    const spec = create(TestResultSchema, {
      id: testId,
      runId,
      testCaseId: "tc_01jd3k5q7x8y9z0a1b2c3d4e5j",
      name: "shop",
      status: TestStatus.FAILED,
      durationMs: 300n,
      summary: 'test 2 "adds to cart" failed: expected 2, got 1',
      url: `https://app.testrun.example/runs/${runId}/tests/${testId}`,
      attempt: 1,
      failedStep: 2,
      cause: FailureCause.ASSERTION,
      stepResults: [
        step(1, TestStatus.PASSED, "opens the shop"),
        step(2, TestStatus.FAILED, "adds to cart", "expected 2, got 1"),
        step(3, TestStatus.SKIPPED, "pays later"),
        step(4, TestStatus.PASSED, "logs out"),
      ],
    });
    const run = runJson(
      create(RunSchema, {
        id: runId,
        projectId: "prj_01jd3k5q7x8y9z0a1b2c3d4e5f",
        name: "Smoke",
        status: RunStatus.FAILED,
        finished: true,
        totalTests: 1,
        failedTests: 1,
        startedAt: at(0),
        finishedAt: at(1),
        durationMs: 1000n,
        url: `https://app.testrun.example/runs/${runId}`,
        environmentId: "env_01jd3k5q7x8y9z0a1b2c3d4e5g",
        createdAt: at(0),
        tests: [spec],
      }),
      origin,
    );
    expectDocumented({
      method: "GET",
      url: `/v1/runs/${runId}`,
      status: 200,
      headers: new Headers({
        "content-type": "application/json; charset=utf-8",
        "x-request-id": "render-spec-steps-test",
        "cache-control": "no-store",
        "ratelimit-limit": "60",
        "ratelimit-remaining": "59",
        "ratelimit-reset": "60",
      }),
      text: JSON.stringify(run),
    });
    expect(run.tests[0]?.stepResults).to.deep.equal([
      { number: 1, status: "PASSED", durationMs: 100, name: "opens the shop", error: null },
      { number: 2, status: "FAILED", durationMs: 100, name: "adds to cart", error: "expected 2, got 1" },
      { number: 3, status: "SKIPPED", durationMs: 100, name: "pays later", error: null },
      { number: 4, status: "PASSED", durationMs: 100, name: "logs out", error: null },
    ]);
  });
});
