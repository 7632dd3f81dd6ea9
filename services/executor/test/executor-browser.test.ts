// The executor running a browser test end to end against the real runs and catalog services (all
// in-process), its steps in real Chromium against a real web application on 127.0.0.2: the result is
// reported after the artifacts were handed over (PutArtifact), whatever the runs service did with them.
import { FailureCause, RunStatus, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  type InProcessRunsStack,
  operator,
  type RunsProject,
  seedRunsProject,
  startInProcessRunsStack,
} from "@testrun/testing";
import { expect } from "chai";
import { type BrowserTarget, killBrowser, startBrowserTarget, stepsOf } from "./browser-target.js";
import { type InProcessExecutor, startExecutor } from "./in-process.js";

describe("executor running a browser test", function () {
  this.timeout(60_000);
  let stack: InProcessRunsStack;
  let target: BrowserTarget;
  let executor: InProcessExecutor;
  let project: RunsProject;

  before(async () => {
    stack = await startInProcessRunsStack({}, 6);
    target = await startBrowserTarget();
    executor = await startExecutor(stack, {
      // Only the browser target's address: 127.0.0.1 (the services) stays refused.
      EGRESS_ALLOW_CIDRS: "127.0.0.2/32",
    });
    project = await seedRunsProject(stack);
  });
  after(async () => {
    await executor?.stop();
    await target?.close();
    await stack?.stop();
  });

  it("runs a browser test and reports its result, the artifacts handed over first", async () => {
    const { catalog } = stack.catalog;
    const { projectId } = project;
    const { environment } = await catalog.createEnvironment({
      actor: operator(),
      projectId,
      name: "web app",
      baseUrl: target.url,
    });
    const value = "v4lue-typed-in-the-page";
    await catalog.createVariable({ actor: operator(), projectId, name: "TYPED", value });
    const { testCase } = await catalog.createTestCase({
      actor: operator(),
      projectId,
      name: "browser fails at its check",
      tags: [],
      enabled: true,
      steps: stepsOf([
        { name: "open", browser: { goto: { url: "/echo-form" } } },
        { name: "type", browser: { fill: { locator: { label: "Value" }, value: "{{TYPED}}" } } },
        { name: "send", browser: { click: { locator: { role: "button", name: "Send" } } } },
        {
          name: "echoed",
          browser: { expect: { locator: { testId: "echo" }, text: "something else" }, timeoutMs: 500 },
        },
      ]),
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
      failedStep: 4,
      summary:
        'step 4 "echoed": expect getByTestId(\'echo\') text: expected text to contain "something else", got "You typed: {{TYPED}}"',
    });
    // Whatever the runs service did with the screenshot and the trace, no log line holds the value.
    expect(executor.lines().join("\n")).to.not.include(value);
  });

  it("reports a browser that crashed under a test as the system's failure: run again without its retries, not flaky", async () => {
    const { catalog } = stack.catalog;
    const { projectId } = project;
    const { environment } = await catalog.createEnvironment({
      actor: operator(),
      projectId,
      name: "gated app",
      baseUrl: target.url,
    });
    const { testCase } = await catalog.createTestCase({
      actor: operator(),
      projectId,
      name: "waits at the gate",
      tags: [],
      enabled: true,
      steps: stepsOf([{ name: "open", browser: { goto: { url: "/gate" }, timeoutMs: 30_000 } }]),
    });
    const gateHits = target.hits.filter((hit) => hit.endsWith(" /gate")).length;
    const { run } = await stack.runs.startRun({
      actor: project.key,
      projectId,
      environment: environment?.id,
      selection: { case: "testCaseIds", value: { ids: [testCase?.id ?? ""] } },
      retries: 0,
    });
    // The first attempt waits at the gate: its browser dies under it.
    await target.hitsOf("/gate", gateHits + 1);
    await killBrowser();
    // The next attempt, in a new browser, comes to the gate too: it opens for that one.
    await target.hitsOf("/gate", gateHits + 2);
    target.openGate();
    const ids = { actor: project.key, projectId, runId: run?.id ?? "" };
    let last: RunStatus | undefined;
    for await (const { run: now } of stack.runs.watchRun(ids, { timeoutMs: 0 })) last = now?.status;
    const { test } = await stack.runs.getTestResult({ ...ids, testResultId: run?.tests[0]?.id ?? "" });
    expect(last, JSON.stringify(test?.attempts.map((a) => [a.status, a.cause, a.summary]))).to.equal(
      RunStatus.PASSED,
    );
    expect([test?.status, test?.flaky]).to.deep.equal([TestStatus.PASSED, false]);
    expect(test?.attempts.map((a) => [a.status, a.cause])).to.deep.equal([
      [TestStatus.FAILED, FailureCause.BROWSER],
      [TestStatus.PASSED, FailureCause.UNSPECIFIED],
    ]);
  });
});
