// The executor running a Playwright spec case against the real runs and catalog services (all
// in-process): one step result per test(), named, SKIPPED for a test.skip, the ones after a failed
// test() reported too, and the spec's browser held to the egress guard like browser steps' (its
// pages reach the allowed target, not a server on 127.0.0.1 beside the executor).
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import {
  FailureCause,
  RunStatus,
  TestDispatchSchema,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import { publishTests } from "@testrun/kit";
import {
  eventually,
  type InProcessRunsStack,
  operator,
  type RunsProject,
  seedRunsProject,
  startInProcessRunsStack,
} from "@testrun/testing";
import { expect } from "chai";
import { type BrowserTarget, startBrowserTarget } from "./browser-target.js";
import { type InProcessExecutor, startExecutor } from "./in-process.js";

describe("executor running a Playwright spec case", function () {
  this.timeout(90_000);
  let stack: InProcessRunsStack;
  let target: BrowserTarget;
  let executor: InProcessExecutor;
  let project: RunsProject;
  const beside = createServer((_req, res) => res.end("<title>beside the executor</title>"));

  before(async () => {
    stack = await startInProcessRunsStack({}, 6);
    target = await startBrowserTarget();
    beside.listen(0, "127.0.0.1");
    await once(beside, "listening");
    // The default PLAYWRIGHT_SPECS: each spec in the user-code sandbox.
    executor = await startExecutor(stack, { EGRESS_ALLOW_CIDRS: "127.0.0.2/32" });
    project = await seedRunsProject(stack);
  });
  after(async () => {
    await executor?.stop();
    await target?.close();
    beside.close();
    await stack?.stop();
  });

  it("reports each test() by title, SKIPPED and the ones after a failure included, its browser behind the egress guard", async () => {
    const { catalog } = stack.catalog;
    const { projectId } = project;
    const { environment } = await catalog.createEnvironment({
      actor: operator(),
      projectId,
      name: "web app",
      baseUrl: target.url,
    });
    const besideUrl = `http://127.0.0.1:${(beside.address() as AddressInfo).port}/`;
    const source = `import { test, expect } from "@playwright/test";
test("opens the form", async ({ page }) => {
  await page.goto("/echo-form");
  await expect(page.getByLabel("Value")).toBeVisible();
});
test("reaches a server beside the executor", async ({ page }) => {
  await page.goto(${JSON.stringify(besideUrl)});
  await expect(page).toHaveTitle("beside the executor", { timeout: 2000 });
});
test.skip("not yet", async () => {});
test("opens the form again", async ({ page }) => {
  await page.goto("/echo-form");
});
`;
    const { testCase } = await catalog.createTestCase({
      actor: operator(),
      projectId,
      name: "form spec",
      playwright: { spec: { path: "tests/form.spec.ts", source } },
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
    const { test } = await stack.runs.getTestResult({ ...ids, testResultId: run?.tests[0]?.id ?? "" });
    expect(last, test?.summary).to.equal(RunStatus.FAILED);
    expect(
      test?.failedStep,
      `${test?.summary} | ${test?.stepResults.map((s) => s.error).join(" | ")}`,
    ).to.equal(2);
    expect(test?.cause).to.not.equal(FailureCause.UNSPECIFIED);
    expect(test?.stepResults.map((s) => [s.number, s.status, s.name])).to.deep.equal([
      [1, TestStatus.PASSED, "opens the form"],
      [2, TestStatus.FAILED, "reaches a server beside the executor"],
      [3, TestStatus.SKIPPED, "not yet"],
      [4, TestStatus.PASSED, "opens the form again"],
    ]);
    // The proxy refused it: the page never showed the server's title.
    expect(test?.stepResults[1]?.error).to.include("toHaveTitle");
    expect(test?.summary).to.match(/^test 2 "reaches a server beside the executor" failed: /);
  });

  /**
   * Stops the file's executor, starts one with `env` in its place (stopped by `after`), and starts a
   * run of a new one-test spec case named `name`.
   */
  const runSpecAlone = async (name: string, env: Record<string, string>) => {
    await executor.stop();
    executor = await startExecutor(stack, { EGRESS_ALLOW_CIDRS: "127.0.0.2/32", ...env });
    const { projectId } = project;
    const { testCase } = await stack.catalog.catalog.createTestCase({
      actor: operator(),
      projectId,
      name,
      playwright: {
        spec: {
          path: "tests/alone.spec.ts",
          source: `import { test } from "@playwright/test";\ntest("x", async () => {});\n`,
        },
      },
    });
    const { run } = await stack.runs.startRun({
      actor: project.key,
      projectId,
      environment: "web app",
      selection: { case: "testCaseIds", value: { ids: [testCase?.id ?? ""] } },
    });
    return { run, ids: { actor: project.key, projectId, runId: run?.id ?? "" } };
  };

  it("hands back a spec it read from the browser stream when it does not run specs, instead of failing it", async () => {
    // Taken by a browser-only executor alone: the other one stops first.
    const { run, ids } = await runSpecAlone("spec on a browser-only executor", {
      EXECUTOR_STEP_KINDS: "browser",
    });
    const { projectId } = project;
    const testResultId = run?.tests[0]?.id ?? "";
    // As a runs service from before specs had a stream of their own published it.
    await publishTests(stack.redis, [
      {
        dispatch: create(TestDispatchSchema, { testResultId, runId: run?.id ?? "", projectId }),
        kind: "browser",
      },
    ]);
    await executor.logLine((line) => line.includes("Playwright spec handed back"));
    const { test } = await stack.runs.getTestResult({ ...ids, testResultId });
    expect(test?.status).to.equal(TestStatus.QUEUED);
    await stack.runs.cancelRun(ids);
  });

  it("leaves a spec test to executors that run specs, saying why it waits, when the only executor's PLAYWRIGHT_SPECS is off", async () => {
    // Taken by that executor alone: the other one stops first.
    const { run, ids } = await runSpecAlone("spec on a plain executor", { PLAYWRIGHT_SPECS: "off" });
    // The runs service hears it from the executor's report, at its next reconciler pass (5 s here).
    const test = await eventually(
      async () => {
        const { test } = await stack.runs.getTestResult({ ...ids, testResultId: run?.tests[0]?.id ?? "" });
        return test?.waitingFor ? test : undefined;
      },
      "the spec to say what it waits for",
      30_000,
    );
    expect(test.status).to.equal(TestStatus.QUEUED);
    expect(test.waitingFor).to.equal(
      "an executor that can run Playwright specs: Playwright specs are turned off (PLAYWRIGHT_SPECS=off)",
    );
    await stack.runs.cancelRun(ids);
  });
});
