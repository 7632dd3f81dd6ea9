// How /v1 shows attempts, retries and causes (docs/rest-api.md, "Attempts, retries and causes"):
// a run with a test that passed on retry and one that failed with the system's cause, rendered as
// GET /v1/runs/{id} and GET /v1/runs answer, each answer checked against the OpenAPI document.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  ArtifactKind,
  ArtifactSchema,
  FailureCause,
  type Run,
  RunSchema,
  RunStatus,
  StepResultSchema,
  TestAttemptSchema,
  TestResultSchema,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import { expect } from "chai";
import { expectDocumented } from "../../../test/openapi-check.js";
import { runJson, runListJson } from "../src/render.js";

const origin = "https://api.testrun.example";
const runId = "run_01jd3k6a0b1c2d3e4f5g6h7j8k";
const flakyId = "tr_01jd3k6a0b1c2d3e4f5g6h7j8m";
const lostId = "tr_01jd3k6a0b1c2d3e4f5g6h7j8n";
const at = (second: number) => timestampFromDate(new Date(Date.UTC(2026, 10, 28, 12, 0, second)));
const step = (number: number, status: TestStatus, durationMs: number) =>
  create(StepResultSchema, { number, status, durationMs: BigInt(durationMs) });
const response = (id: string, testResultId: string) =>
  create(ArtifactSchema, {
    id,
    runId,
    testResultId,
    kind: ArtifactKind.HTTP_RESPONSE,
    name: "http-response",
    contentType: "application/json",
    sizeBytes: 412n,
    step: 1,
  });

/** A finished run: "checkout" failed with a 500 then passed (flaky); "search" lost its executor twice. */
function finishedRun(): Run {
  const firstAttempt = create(TestAttemptSchema, {
    number: 1,
    status: TestStatus.FAILED,
    startedAt: at(1),
    finishedAt: at(2),
    durationMs: 840n,
    summary: 'step 1 "open": expected status 200, got 500',
    failedStep: 1,
    stepResults: [step(1, TestStatus.FAILED, 840)],
    cause: FailureCause.ASSERTION,
    executorId: "executor-a",
    artifacts: [response("art_01jd3k6q2r3s4t5v6w7x8y9z0a", flakyId)],
  });
  const secondAttempt = create(TestAttemptSchema, {
    number: 2,
    status: TestStatus.PASSED,
    startedAt: at(3),
    finishedAt: at(4),
    durationMs: 120n,
    summary: "2 steps passed",
    stepResults: [step(1, TestStatus.PASSED, 90), step(2, TestStatus.PASSED, 30)],
    executorId: "executor-b",
  });
  const lost = (number: number) =>
    create(TestAttemptSchema, {
      number,
      status: TestStatus.FAILED,
      startedAt: at(number),
      finishedAt: at(number + 5),
      durationMs: 5000n,
      summary: "the executor stopped responding",
      cause: FailureCause.EXECUTOR_LOST,
      executorId: `executor-${number}`,
    });
  return create(RunSchema, {
    id: runId,
    projectId: "prj_01jd3k5q7x8y9z0a1b2c3d4e5f",
    name: "Smoke",
    status: RunStatus.FAILED,
    finished: true,
    totalTests: 2,
    passedTests: 1,
    failedTests: 1,
    flakyTests: 1,
    startedAt: at(0),
    finishedAt: at(12),
    durationMs: 12_000n,
    url: `https://app.testrun.example/runs/${runId}`,
    environmentId: "env_01jd3k5q7x8y9z0a1b2c3d4e5g",
    createdAt: at(0),
    tests: [
      create(TestResultSchema, {
        id: flakyId,
        runId,
        testCaseId: "tc_01jd3k5q7x8y9z0a1b2c3d4e5j",
        name: "checkout",
        status: TestStatus.PASSED,
        durationMs: 120n,
        summary: "2 steps passed",
        url: `https://app.testrun.example/runs/${runId}/tests/${flakyId}`,
        attempt: 2,
        stepResults: secondAttempt.stepResults,
        flaky: true,
        retries: 1,
        attempts: [firstAttempt, secondAttempt],
      }),
      create(TestResultSchema, {
        id: lostId,
        runId,
        testCaseId: "tc_01jd3k5q7x8y9z0a1b2c3d4e5k",
        name: "search",
        status: TestStatus.FAILED,
        durationMs: 5000n,
        summary: "the executor stopped responding",
        url: `https://app.testrun.example/runs/${runId}/tests/${lostId}`,
        attempt: 2,
        cause: FailureCause.EXECUTOR_LOST,
        attempts: [lost(1), lost(2)],
      }),
    ],
  });
}

const keyedHeaders = () =>
  new Headers({
    "content-type": "application/json; charset=utf-8",
    "x-request-id": "render-attempts-test",
    "cache-control": "no-store",
    "ratelimit-limit": "60",
    "ratelimit-remaining": "59",
    "ratelimit-reset": "60",
  });

describe("REST rendering of attempts, retries and causes", () => {
  it("shows a pass on retry as PASSED and flaky with both attempts, each with its own cause, steps, executor and artifacts", () => {
    const run = runJson(finishedRun(), origin);
    expectDocumented({
      method: "GET",
      url: `/v1/runs/${runId}`,
      status: 200,
      headers: keyedHeaders(),
      text: JSON.stringify(run),
    });
    expect(run.flakyTests).to.equal(1);
    expect(run.passedTests, "a flaky pass counts as passed too").to.equal(1);
    const [flaky] = run.tests;
    expect(flaky).to.include({ status: "PASSED", flaky: true, cause: null, retries: 1, failedStep: null });
    expect(flaky?.stepResults).to.deep.equal([
      { number: 1, status: "PASSED", durationMs: 90, name: null, error: null },
      { number: 2, status: "PASSED", durationMs: 30, name: null, error: null },
    ]);
    expect(flaky?.attempts).to.deep.equal([
      {
        number: 1,
        status: "FAILED",
        startedAt: "2026-11-28T12:00:01.000Z",
        finishedAt: "2026-11-28T12:00:02.000Z",
        durationMs: 840,
        summary: 'step 1 "open": expected status 200, got 500',
        failedStep: 1,
        stepResults: [{ number: 1, status: "FAILED", durationMs: 840, name: null, error: null }],
        cause: "assertion",
        executor: "executor-a",
        artifacts: [
          {
            id: "art_01jd3k6q2r3s4t5v6w7x8y9z0a",
            kind: "http_response",
            name: "http-response",
            contentType: "application/json",
            size: 412,
            step: 1,
            url: `${origin}/v1/runs/${runId}/tests/${flakyId}/artifacts/art_01jd3k6q2r3s4t5v6w7x8y9z0a`,
          },
        ],
      },
      {
        number: 2,
        status: "PASSED",
        startedAt: "2026-11-28T12:00:03.000Z",
        finishedAt: "2026-11-28T12:00:04.000Z",
        durationMs: 120,
        summary: "2 steps passed",
        failedStep: null,
        stepResults: [
          { number: 1, status: "PASSED", durationMs: 90, name: null, error: null },
          { number: 2, status: "PASSED", durationMs: 30, name: null, error: null },
        ],
        cause: null,
        executor: "executor-b",
        artifacts: [],
      },
    ]);
  });

  it("names a FAILED test's cause in lower case, executor_lost on every lost attempt, and is not flaky", () => {
    const [, lost] = runJson(finishedRun(), origin).tests;
    expect(lost).to.include({ status: "FAILED", flaky: false, cause: "executor_lost", retries: 0 });
    expect(lost?.attempts.map((a) => [a.number, a.status, a.cause, a.executor, a.failedStep])).to.deep.equal([
      [1, "FAILED", "executor_lost", "executor-1", null],
      [2, "FAILED", "executor_lost", "executor-2", null],
    ]);
  });

  it("shows a test never started with no attempts and no cause, and a RUNNING attempt without its end", () => {
    const source = finishedRun();
    const [first, second] = source.tests;
    if (!first || !second) throw new Error("two tests");
    Object.assign(first, {
      status: TestStatus.QUEUED,
      flaky: false,
      attempts: [],
      durationMs: undefined,
      stepResults: [],
    });
    Object.assign(second, {
      status: TestStatus.RUNNING,
      cause: FailureCause.UNSPECIFIED,
      attempts: [
        create(TestAttemptSchema, {
          number: 1,
          status: TestStatus.RUNNING,
          startedAt: at(1),
          executorId: "x",
        }),
      ],
    });
    Object.assign(source, {
      status: RunStatus.RUNNING,
      finished: false,
      finishedAt: undefined,
      durationMs: undefined,
    });
    const run = runJson(source, origin);
    expectDocumented({
      method: "GET",
      url: `/v1/runs/${runId}`,
      status: 200,
      headers: keyedHeaders(),
      text: JSON.stringify(run),
    });
    expect(run.tests[0]).to.include({ status: "QUEUED", flaky: false, cause: null });
    expect(run.tests[0]?.attempts).to.deep.equal([]);
    expect(run.tests[1]?.attempts[0]).to.include({
      status: "RUNNING",
      finishedAt: null,
      durationMs: null,
      cause: null,
    });
  });

  it("lists a run with its flakyTests (GET /v1/runs)", () => {
    const item = runListJson(finishedRun());
    expectDocumented({
      method: "GET",
      url: "/v1/runs",
      status: 200,
      headers: keyedHeaders(),
      text: JSON.stringify({ runs: [item] }),
    });
    expect(item).to.include({ flakyTests: 1, passedTests: 1, failedTests: 1 });
    expect(item).to.not.have.property("tests");
  });
});
