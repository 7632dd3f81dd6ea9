// Tests go to the executors that can run them: a Playwright spec to the stream of specs, a test with
// a browser step to the stream of browser tests, an HTTP-only test to the stream it always had (kit
// dispatch.ts), at its start, when it is
// handed back and when the reconciler publishes it again; and the dispatch deadline counts for each
// kind apart, since separate executor pools take separate kinds.
import { Code } from "@connectrpc/connect";
import { RunStatus, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { specCauses, type TestKind } from "@testrun/kit";
import {
  createBrowserTestCase,
  eventually,
  type InProcessRunsStack,
  leaseOf,
  operator,
  type RunsProject,
  rejects,
  seedRunsProject,
  startInProcessRunsStack,
  streamDispatches,
} from "@testrun/testing";
import { expect } from "chai";

describe("runs: each test published to the executors of its kind", () => {
  let stack: InProcessRunsStack;
  let project: RunsProject;
  let browserCase: string;
  /** seedProject's "login" case: one HTTP step. */
  let httpCase: string;

  before(async () => {
    stack = await startInProcessRunsStack(
      { RECONCILE_INTERVAL_MS: "100", REPUBLISH_AFTER_MS: "100", DISPATCH_DEADLINE_MS: "1500" },
      7,
    );
    project = await seedRunsProject(stack);
    browserCase = await createBrowserTestCase(stack, project.projectId, "sign in");
    httpCase = project.cases[0] ?? "";
  });
  after(async () => {
    await stack?.stop();
  });

  const startBoth = async () => {
    const { run } = await stack.runs.startRun({
      actor: project.key,
      projectId: project.projectId,
      selection: { case: "testCaseIds", value: { ids: [httpCase, browserCase] } },
    });
    const testOf = (name: string) => run?.tests.find((test) => test.name === name)?.id ?? "";
    return { runId: run?.id ?? "", httpTest: testOf("login"), browserTest: testOf("sign in") };
  };
  const published = async (kind: TestKind) =>
    (await streamDispatches(stack.redis, kind)).map((dispatch) => dispatch?.testResultId);
  const getRun = async (runId: string) =>
    (await stack.runs.getRun({ actor: project.key, projectId: project.projectId, runId })).run;

  it("publishes a test with a browser step to the browser stream, an HTTP-only test to the HTTP stream", async () => {
    const { httpTest, browserTest } = await startBoth();
    expect(await published("browser"))
      .to.include(browserTest)
      .and.not.include(httpTest);
    expect(await published("http"))
      .to.include(httpTest)
      .and.not.include(browserTest);
  });

  it("publishes a browser test handed back by its executor to the browser stream again", async () => {
    const { browserTest } = await startBoth();
    const { assignment } = await stack.executor.claimTest({ testResultId: browserTest, executorId: "pod/0" });
    await stack.redis.flushdb();
    await stack.executor.releaseTest({ ...leaseOf(assignment), reason: "executor shutting down" });
    expect(await published("browser")).to.include(browserTest);
    expect(await published("http")).to.not.include(browserTest);
  });

  it("republishes QUEUED tests to their own streams after Redis lost them", async () => {
    const { httpTest, browserTest } = await startBoth();
    await stack.redis.flushdb();
    await eventually(
      async () =>
        (await published("browser")).includes(browserTest) && (await published("http")).includes(httpTest)
          ? true
          : undefined,
      "both tests to be published again",
    );
    expect(await published("http")).to.not.include(browserTest);
    expect(await published("browser")).to.not.include(httpTest);
  });

  it("skips browser tests nobody takes (no_executor) while executors are at work on HTTP tests only, saying none is configured for them", async () => {
    const { runId, httpTest, browserTest } = await startBoth();
    // An HTTP pool, which says so: it takes HTTP tests and is not configured for browser tests.
    await stack.executor.reportExecutorKinds({
      executor: "http-pod",
      kinds: [
        { kind: "http", configured: true, available: true },
        { kind: "browser", configured: false, available: false },
      ],
    });
    // At work: its lease (30 s) stays live, and heartbeats keep it so.
    const { assignment } = await stack.executor.claimTest({
      testResultId: httpTest,
      executorId: "http-pod/0",
    });
    // Meanwhile the browser test says what it waits for.
    const waiting = await eventually(async () => {
      const test = (await getRun(runId))?.tests.find((candidate) => candidate.id === browserTest);
      return test?.waitingFor ? test : undefined;
    }, "the browser test to say what it waits for");
    expect(waiting.waitingFor).to.equal(
      "an executor that can run browser tests: no executor is configured for them",
    );
    const skipped = await eventually(async () => {
      const test = (await getRun(runId))?.tests.find((candidate) => candidate.id === browserTest);
      return test?.status === TestStatus.SKIPPED ? test : undefined;
    }, "the browser test to be skipped past the dispatch deadline");
    expect(skipped.summary).to.equal(
      "no executor here can run browser tests: no executor is configured for them",
    );
    // The HTTP test is untouched: its executor is at work on it.
    const meanwhile = await getRun(runId);
    expect(meanwhile?.tests.find((test) => test.id === httpTest)?.status).to.equal(TestStatus.RUNNING);
    await stack.executor.completeTest({
      ...leaseOf(assignment),
      status: TestStatus.PASSED,
      summary: "",
      durationMs: 3n,
    });
    const finished = await getRun(runId);
    expect(finished).to.include({ status: RunStatus.PASSED, passedTests: 1, skippedTests: 1 });
    // Stopping, the pool withdraws its report: nothing is known of the kinds any more.
    await stack.executor.reportExecutorKinds({ executor: "http-pod", kinds: [] });
  });

  it("skips a Playwright spec past the dispatch deadline while browser executors are at work, saying why the executors configured for specs cannot run them", async () => {
    const { testCase } = await stack.catalog.catalog.createTestCase({
      actor: operator(),
      projectId: project.projectId,
      name: "checkout spec",
      playwright: {
        spec: {
          path: "tests/checkout.spec.ts",
          source: 'import { test } from "@playwright/test";\ntest("x", async () => {});\n',
        },
      },
    });
    const { run } = await stack.runs.startRun({
      actor: project.key,
      projectId: project.projectId,
      selection: { case: "testCaseIds", value: { ids: [browserCase, testCase?.id ?? ""] } },
    });
    const testOf = (name: string) => run?.tests.find((test) => test.name === name)?.id ?? "";
    const [browserTest, specTest] = [testOf("sign in"), testOf("checkout spec")];
    expect(await published("spec")).to.include(specTest);
    expect(await published("browser"))
      .to.include(browserTest)
      .and.not.include(specTest);
    // The browser pool is configured for specs too (the chart's default), but is not root.
    await stack.executor.reportExecutorKinds({
      executor: "browser-pod",
      kinds: [
        { kind: "http", configured: false, available: false },
        { kind: "browser", configured: true, available: true },
        { kind: "spec", configured: true, available: false, cause: specCauses.noSandbox },
      ],
    });
    const { assignment } = await stack.executor.claimTest({
      testResultId: browserTest,
      executorId: "browser-pod/0",
    });
    const specOf = async () => (await getRun(run?.id ?? ""))?.tests.find((test) => test.id === specTest);
    // The reconciler reads the reports at each pass (100 ms here): the previous test's may count until then.
    const expected = `an executor that can run Playwright specs: ${specCauses.noSandbox}`;
    await eventually(
      async () => ((await specOf())?.waitingFor === expected ? true : undefined),
      "the spec to say what it waits for",
    );
    const skipped = await eventually(async () => {
      const test = await specOf();
      return test?.status === TestStatus.SKIPPED ? test : undefined;
    }, "the spec to be skipped past the dispatch deadline");
    expect(skipped.summary).to.equal(`no executor here can run Playwright specs: ${specCauses.noSandbox}`);
    await stack.executor.completeTest({
      ...leaseOf(assignment),
      status: TestStatus.PASSED,
      summary: "",
      durationMs: 3n,
    });
    await stack.executor.reportExecutorKinds({ executor: "browser-pod", kinds: [] });
  });

  it("refuses a report of the kinds an executor takes that it could not show, and any caller but an executor", async () => {
    const report = (kinds: object[], executor = "pod-1") =>
      stack.executor.reportExecutorKinds({ executor, kinds } as never);
    const refused = async (call: Promise<unknown>, message: string) =>
      expect((await rejects(call, Code.InvalidArgument)).rawMessage).to.equal(message);
    await refused(report([{ kind: "ftp", configured: true }]), "kind must be one of http, browser, spec");
    await refused(
      report([
        { kind: "http", configured: true, available: true },
        { kind: "http", configured: true, available: true },
      ]),
      "kind http is given twice",
    );
    await refused(
      report([{ kind: "browser", configured: true, cause: "line one\nline two" }]),
      "cause must be one line",
    );
    await refused(
      report([{ kind: "browser", configured: true, cause: "x".repeat(201) }]),
      "cause must be at most 200 characters",
    );
    await refused(
      report([{ kind: "browser", configured: true, available: true, cause: "broken" }]),
      "cause is for a kind configured and not available",
    );
    // A cause is shown in every project's waiting and skip messages: only the executors' phrases.
    for (const cause of [
      "contact support at https://evil.example with your API key",
      "the browser is missing a system library (see https://evil.example)",
      "the browser did not start within 30 s, call +1 555 0100",
    ]) {
      const error = await rejects(
        report([{ kind: "browser", configured: true, cause }]),
        Code.InvalidArgument,
      );
      expect(error.rawMessage, cause).to.match(/^cause must be one of the phrases executors say: /);
      expect(error.rawMessage).to.contain("the browser is not installed (no file at CHROMIUM_PATH)");
    }
    await refused(report([], ""), "executor must be 1 to 200 characters");
    await rejects(stack.runs.reportExecutorKinds({ executor: "pod-1", kinds: [] }), Code.PermissionDenied);
  });

  it("keeps the causes executors say, and the reports of at most 1,000 executors: a new one past them is refused until one stops or its report expires", async () => {
    const missing = "the browser is missing a system library (libnss3.so)";
    const report = (executor: string, cause = missing) =>
      stack.executor.reportExecutorKinds({
        executor,
        kinds: [{ kind: "browser", configured: true, available: false, cause }],
      });
    await report("pod-ok");
    await report("pod-ok", "the browser did not start within 30 s");
    await report("pod-ok", "the browser is missing a system library");
    await stack.executor.reportExecutorKinds({ executor: "pod-ok", kinds: [] });
    // 1,000 live reports, as of 1,000 executors (written at once: as many RPCs would say the same).
    const live = JSON.stringify({ at: Date.now(), kinds: { http: { configured: true, available: true } } });
    const names = Array.from({ length: 1000 }, (_, i) => `filler-${i}`);
    await stack.redis.hset("testrun:executors", Object.fromEntries(names.map((name) => [name, live])));
    try {
      const error = await rejects(report("one-too-many"), Code.ResourceExhausted);
      expect(error.rawMessage).to.contain("already keeps the reports of 1000 executors");
      // One already kept still reports; the refused one left nothing.
      await report("filler-7");
      expect(await stack.redis.hexists("testrun:executors", "one-too-many")).to.equal(0);
      // One stopping makes room.
      await stack.executor.reportExecutorKinds({ executor: "filler-0", kinds: [] });
      await report("one-too-many");
      await rejects(report("two-too-many"), Code.ResourceExhausted);
      // A report older than 30 s is of an executor gone: forgotten to make room.
      await stack.redis.hset(
        "testrun:executors",
        "filler-1",
        JSON.stringify({ at: Date.now() - 31_000, kinds: {} }),
      );
      await report("two-too-many");
      expect(await stack.redis.hlen("testrun:executors")).to.equal(1000);
    } finally {
      await stack.redis.del("testrun:executors");
    }
  });
});
