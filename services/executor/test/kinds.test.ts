// An executor takes only the tests it can run (docs/runs.md, "Kinds no executor can run"): one whose
// browser does not start still runs HTTP tests but claims no browser test, which waits QUEUED
// saying what for and, past the dispatch deadline, ends SKIPPED saying why (the system's cause,
// not the test's) with its credit given back; and once the browser starts, browser tests are
// taken again without a restart. The runs and catalog services are real and in-process.
import { chmod, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RunStatus, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  balanceOf,
  eventually,
  type InProcessRunsStack,
  operator,
  type RunsProject,
  seedRunsProject,
  startInProcessRunsStack,
} from "@testrun/testing";
import { expect } from "chai";
import { localTargetsEgress } from "../../../scripts/system.js";
import { chromiumPath, killBrowser, stepsOf } from "./browser-target.js";
import { type InProcessExecutor, startExecutor } from "./in-process.js";
import { startTestTarget, type TestTarget } from "./target.js";

const notInstalled = "the browser is not installed (no file at CHROMIUM_PATH)";

/** A runs stack, a target, and a project with one HTTP and one browser test case against it. */
function scenario(runsEnv: Record<string, string>) {
  const state = {} as {
    stack: InProcessRunsStack;
    target: TestTarget;
    project: RunsProject;
    environment: string;
    httpCase: string;
    browserCase: string;
  };
  before(async () => {
    state.stack = await startInProcessRunsStack(runsEnv, 6);
    state.target = await startTestTarget();
    state.project = await seedRunsProject(state.stack);
    const { catalog } = state.stack.catalog;
    const { projectId } = state.project;
    state.environment =
      (
        await catalog.createEnvironment({
          actor: operator(),
          projectId,
          name: "target",
          baseUrl: state.target.url,
        })
      ).environment?.id ?? "";
    const testCase = async (name: string, steps: object[]) =>
      (
        await catalog.createTestCase({
          actor: operator(),
          projectId,
          name,
          tags: [],
          enabled: true,
          steps: stepsOf(steps),
        })
      ).testCase?.id ?? "";
    state.httpCase = await testCase("api answers", [
      { name: "text", http: { request: { method: "GET", path: "/text" }, expect: { status: [200] } } },
    ]);
    state.browserCase = await testCase("page opens", [{ name: "open", browser: { goto: { url: "/text" } } }]);
  });
  after(async () => {
    await state.target?.close();
    await state.stack?.stop();
  });
  return {
    state,
    async startBoth() {
      const { run } = await state.stack.runs.startRun({
        actor: state.project.key,
        projectId: state.project.projectId,
        environment: state.environment,
        selection: { case: "testCaseIds", value: { ids: [state.httpCase, state.browserCase] } },
      });
      const idOf = (name: string) => run?.tests.find((test) => test.name === name)?.id ?? "";
      return { runId: run?.id ?? "", httpTest: idOf("api answers"), browserTest: idOf("page opens") };
    },
    async getRun(runId: string) {
      return (
        await state.stack.runs.getRun({ actor: state.project.key, projectId: state.project.projectId, runId })
      ).run;
    },
  };
}

const notTaking = (line: string) => line.includes('"msg":"not taking browser tests');

describe("executor that cannot start its browser", function () {
  this.timeout(60_000);
  // A browser test nobody takes is skipped within seconds.
  const {
    state: s,
    startBoth,
    getRun,
  } = scenario({
    RECONCILE_INTERVAL_MS: "100",
    REPUBLISH_AFTER_MS: "100",
    DISPATCH_DEADLINE_MS: "1500",
  });
  let executor: InProcessExecutor | undefined;
  after(() => executor?.stop());

  it("runs HTTP tests, never claims a browser test: it waits saying what for, then ends SKIPPED saying why, its credit back", async () => {
    executor = await startExecutor(s.stack, {
      CHROMIUM_PATH: "/nonexistent/chromium",
      ...localTargetsEgress,
    });
    await executor.checked;
    const before = await balanceOf(s.stack, s.project.projectId);
    const { runId, httpTest, browserTest } = await startBoth();
    expect(await balanceOf(s.stack, s.project.projectId)).to.equal(before - 2n);

    // While it waits, the run says what for (once the runs service read what the executors say).
    const waiting = await eventually(async () => {
      const test = (await getRun(runId))?.tests.find((candidate) => candidate.id === browserTest);
      return test?.waitingFor ? test : undefined;
    }, "the browser test to say what it waits for");
    expect(waiting).to.include({
      status: TestStatus.QUEUED,
      waitingFor: `an executor that can run browser tests: ${notInstalled}`,
    });

    const finished = await eventually(async () => {
      const run = await getRun(runId);
      return run?.finished ? run : undefined;
    }, "the run to finish");
    expect(finished).to.include({ status: RunStatus.PASSED, passedTests: 1, skippedTests: 1 });
    const http = finished.tests.find((test) => test.id === httpTest);
    expect(http?.status).to.equal(TestStatus.PASSED);
    const browser = finished.tests.find((test) => test.id === browserTest);
    expect(browser).to.include({
      status: TestStatus.SKIPPED,
      summary: `no executor here can run browser tests: ${notInstalled}`,
      // Never claimed: no attempt was made, so nothing about the test itself went wrong.
      attempt: 0,
      waitingFor: "",
    });
    expect(s.target.hits.filter((hit) => hit === "GET /text")).to.have.length(1);
    // The HTTP test's credit is spent; the browser test's comes back.
    await eventually(
      async () => ((await balanceOf(s.stack, s.project.projectId)) === before - 1n ? true : undefined),
      "the browser test's credit to be given back",
    );
    // Said once in the log, with the cause, however often the browser was tried meanwhile.
    expect(executor.lines().filter(notTaking)).to.have.length(1);
    expect(executor.lines().find(notTaking)).to.include(`"cause":"${notInstalled}"`);
  });
});

describe("executor whose browser starts later", function () {
  this.timeout(60_000);
  // The default dispatch deadline: the browser test waits for as long as this takes.
  const {
    state: s,
    startBoth,
    getRun,
  } = scenario({ RECONCILE_INTERVAL_MS: "100", REPUBLISH_AFTER_MS: "100" });
  let executor: InProcessExecutor | undefined;
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "testrun-chromium-"));
    // mkdtemp's 0700 would keep chromium out: a root executor starts it as the browser's user.
    await chmod(dir, 0o755);
  });
  afterEach(async () => {
    await executor?.stop();
    executor = undefined;
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("takes the browser tests that waited once its browser starts, without a restart", async () => {
    const path = join(dir, "chromium");
    executor = await startExecutor(s.stack, { CHROMIUM_PATH: path, ...localTargetsEgress });
    await executor.logLine(notTaking);
    const { runId } = await startBoth();
    // The browser appears (installed meanwhile): the next check finds it.
    await symlink(chromiumPath, path);
    await executor.logLine((line) => line.includes('"msg":"taking browser tests again"'));
    const finished = await eventually(async () => {
      const run = await getRun(runId);
      return run?.finished ? run : undefined;
    }, "the run to finish");
    expect(finished).to.include({ status: RunStatus.PASSED, passedTests: 2 });
    expect(finished.tests.find((test) => test.name === "page opens")).to.include({
      summary: "1 step passed",
      attempt: 1,
    });
  });

  it("hands a browser test back when its browser crashed and will not start again, and runs it once it does", async () => {
    const path = join(dir, "chromium-again");
    await symlink(chromiumPath, path);
    executor = await startExecutor(s.stack, { CHROMIUM_PATH: path, ...localTargetsEgress });
    await executor.checked;
    // The browser is gone for good: its binary removed (an upgrade gone wrong), the running one dies.
    await rm(path);
    await killBrowser();
    await executor.logLine((line) => line.includes('"msg":"a browser disconnected'));
    const { runId, browserTest } = await startBoth();
    await executor.logLine((line) =>
      line.includes('"msg":"test handed back: its browser could not be started"'),
    );
    // No result: the test waits again, saying what for, instead of FAILED for the executor's fault.
    const waiting = await eventually(async () => {
      const test = (await getRun(runId))?.tests.find((candidate) => candidate.id === browserTest);
      return test?.waitingFor ? test : undefined;
    }, "the browser test to wait again");
    expect(waiting).to.include({
      status: TestStatus.QUEUED,
      waitingFor: `an executor that can run browser tests: ${notInstalled}`,
    });
    await symlink(chromiumPath, path);
    const finished = await eventually(async () => {
      const run = await getRun(runId);
      return run?.finished ? run : undefined;
    }, "the run to finish");
    expect(finished).to.include({ status: RunStatus.PASSED, passedTests: 2 });
    expect(finished.tests.find((test) => test.id === browserTest)).to.include({
      summary: "1 step passed",
      attempt: 2,
    });
  });
});
