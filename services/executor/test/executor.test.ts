// The executor running a test end to end against the real runs and catalog services (and their
// PostgreSQL and Redis), all in-process, its steps against a real HTTP server: what it reports of a
// failure.
import { RunStatus, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  type InProcessRunsStack,
  operator,
  type RunsProject,
  seedRunsProject,
  startInProcessRunsStack,
} from "@testrun/testing";
import { expect } from "chai";
import { localTargetsEgress } from "../../../scripts/system.js";
import { type InProcessExecutor, startExecutor } from "./in-process.js";
import { startTestTarget, type TestTarget } from "./target.js";

describe("executor with the runs service", () => {
  let stack: InProcessRunsStack;
  let target: TestTarget;
  let executor: InProcessExecutor;
  let project: RunsProject;

  before(async () => {
    stack = await startInProcessRunsStack({}, 6);
    target = await startTestTarget();
    executor = await startExecutor(stack, {
      TEST_DEADLINE_MS: "2000",
      ...localTargetsEgress,
    });
    project = await seedRunsProject(stack);
  });
  after(async () => {
    await executor?.stop();
    await target?.close();
    await stack?.stop();
  });

  it("reports which step failed: the second of three", async () => {
    const { catalog } = stack.catalog;
    const { projectId } = project;
    const { environment } = await catalog.createEnvironment({
      actor: operator(),
      projectId,
      name: "test target",
      baseUrl: target.url,
    });
    const http = (path: string, status: number) => ({
      case: "http" as const,
      value: { request: { method: "GET", path }, expect: { status: [status] } },
    });
    const { testCase } = await catalog.createTestCase({
      actor: operator(),
      projectId,
      name: "second step fails",
      tags: [],
      enabled: true,
      steps: [
        { name: "fine", kind: http("/text", 200) },
        { name: "wants created", kind: http("/status/500", 201) },
        { name: "never", kind: http("/json", 200) },
      ],
    });
    const { run } = await stack.runs.startRun({
      actor: project.key,
      projectId,
      environment: environment?.id,
      selection: { case: "testCaseIds", value: { ids: [testCase?.id ?? ""] } },
    });
    const ids = { actor: project.key, projectId, runId: run?.id ?? "" };
    let last: RunStatus | undefined;
    for await (const { run: now } of stack.runs.watchRun(ids, { timeoutMs: 0 })) last = now?.status;
    expect(last).to.equal(RunStatus.FAILED);

    const { test } = await stack.runs.getTestResult({ ...ids, testResultId: run?.tests[0]?.id ?? "" });
    expect(test?.status).to.equal(TestStatus.FAILED);
    expect(test?.failedStep).to.equal(2);
    expect(test?.summary).to.equal('step 2 "wants created": expected status 201, got 500');
    expect(target.hits).to.not.include("GET /json");
  });

  it("fails a test past its deadline (TEST_DEADLINE_MS) and completes it under its lease", async () => {
    const { catalog } = stack.catalog;
    const { projectId } = project;
    const { environment } = await catalog.createEnvironment({
      actor: operator(),
      projectId,
      name: "hanging target",
      baseUrl: target.url,
    });
    const { testCase } = await catalog.createTestCase({
      actor: operator(),
      projectId,
      name: "hangs",
      tags: [],
      enabled: true,
      steps: [
        {
          name: "never answered",
          kind: { case: "http", value: { request: { method: "GET", path: "/hang", timeoutMs: 60_000 } } },
        },
      ],
    });
    const { run } = await stack.runs.startRun({
      actor: project.key,
      projectId,
      environment: environment?.id,
      selection: { case: "testCaseIds", value: { ids: [testCase?.id ?? ""] } },
    });
    const ids = { actor: project.key, projectId, runId: run?.id ?? "" };
    let last: RunStatus | undefined;
    for await (const { run: now } of stack.runs.watchRun(ids, { timeoutMs: 0 })) last = now?.status;
    expect(last).to.equal(RunStatus.FAILED);
    const { test } = await stack.runs.getTestResult({ ...ids, testResultId: run?.tests[0]?.id ?? "" });
    expect(test).to.include({
      status: TestStatus.FAILED,
      failedStep: 1,
      attempt: 1,
      summary: 'step 1 "never answered": the test ran past its deadline of 2 s',
    });
  });
});
