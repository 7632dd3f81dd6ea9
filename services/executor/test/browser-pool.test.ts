// The executor's one Chromium and its contexts: a fresh context per test, at most BROWSER_CONTEXTS
// at once (a test waits for one under its deadline), and a browser that crashed launched again.

import { browserCauses, isKnownKindCause } from "@testrun/kit";
import { expect } from "chai";
import { BrowserLost, BrowserPool, BrowserUnavailable, launchFailure } from "../src/browser/pool.js";
import { runSteps } from "../src/steps/runner.js";
import {
  type BrowserTarget,
  browserTargetEgress,
  chromiumPath,
  chromiumPid,
  startBrowserTarget,
  stepsOf,
} from "./browser-target.js";

describe("browser pool (one Chromium per executor process, a context per test)", function () {
  this.timeout(60_000);
  let target: BrowserTarget;
  const pools: BrowserPool[] = [];
  const newPool = (contexts: number) => {
    const pool = new BrowserPool({ executablePath: chromiumPath, contexts });
    pools.push(pool);
    return pool;
  };
  before(async () => {
    target = await startBrowserTarget();
  });
  afterEach(async () => {
    target.openGate(); // releases whatever a failed test left waiting
    await Promise.all(pools.splice(0).map((pool) => pool.close()));
  });
  after(() => target?.close());

  const run = (pool: BrowserPool, steps: object[], deadlineMs?: number, project = "prj_a") =>
    runSteps(stepsOf(steps), {
      baseUrl: target.url,
      variables: {},
      egress: browserTargetEgress,
      browsers: pool,
      deadlineMs,
      project,
    });
  const open = (path: string, timeoutMs?: number) => ({
    name: `open ${path}`,
    browser: { goto: { url: path }, timeoutMs },
  });
  const cookieShown = (text: string) => ({
    name: "cookie",
    browser: { expect: { locator: { testId: "cookie" }, text } },
  });

  it("gives each test a fresh context: a cookie set in one test is absent from the next", async () => {
    const pool = newPool(2);
    const first = await run(pool, [open("/cookie/set"), open("/cookie/show"), cookieShown("cookie: seen=A")]);
    expect(first.summary).to.equal("3 steps passed");
    const second = await run(pool, [open("/cookie/show"), cookieShown("cookie: none")]);
    expect(second.summary).to.equal("2 steps passed");
    expect(pool.launches, "one browser for both tests").to.equal(1);
    expect(pool.open, "contexts closed when their tests ended").to.equal(0);
  });

  it("runs at most BROWSER_CONTEXTS browser tests at once; the next waits for a context", async () => {
    const pool = newPool(2);
    const held = () => run(pool, [open("/gate", 30_000)]);
    const tests = [held(), held(), held()];
    await target.hitsOf("/gate", 2);
    expect(pool.open).to.equal(2);
    expect(pool.waiting).to.equal(1);
    const before = target.hits.filter((hit) => hit === "GET /gate").length;
    target.openGate();
    await target.hitsOf("/gate", before + 1);
    target.openGate();
    const outcomes = await Promise.all(tests);
    expect(outcomes.map((outcome) => outcome.summary)).to.deep.equal(Array(3).fill("1 step passed"));
    expect(pool.open).to.equal(0);
  });

  it("ends a test waiting for a context at its deadline", async () => {
    const pool = newPool(1);
    const holder = run(pool, [open("/gate", 30_000)]);
    await target.hitsOf("/gate", target.hits.filter((hit) => hit === "GET /gate").length + 1);
    const waiting = await run(pool, [open("/")], 500);
    expect(waiting).to.include({
      passed: false,
      failedStep: 1,
      summary: 'step 1 "open /": the test ran past its deadline of 500 ms',
    });
    expect(pool.waiting).to.equal(0);
    target.openGate();
    expect((await holder).passed).to.equal(true);
  });

  it("launches the browser again after it crashed: the test it ran is lost, the next one passes", async () => {
    const pool = newPool(2);
    expect((await run(pool, [open("/")])).passed).to.equal(true);

    // Killed while a test is waiting on a page: that test has no result (BrowserLost).
    const gateHits = target.hits.filter((hit) => hit === "GET /gate").length;
    const interrupted = run(pool, [open("/gate", 30_000)]);
    await target.hitsOf("/gate", gateHits + 1);
    const pid = await chromiumPid();
    expect(pid, "the browser's process").to.be.a("number");
    process.kill(pid as number, "SIGKILL");
    let lost: unknown;
    await interrupted.catch((error: unknown) => {
      lost = error;
    });
    expect(lost).to.be.instanceOf(BrowserLost);
    expect(pool.open, "its context freed").to.equal(0);

    const next = await run(pool, [
      open("/"),
      { name: "heading", browser: { expect: { locator: { role: "heading" }, visible: true } } },
    ]);
    expect(next.summary).to.equal("2 steps passed");
    expect(pool.launches).to.equal(2);

    // Killed between tests: the next test starts another.
    process.kill((await chromiumPid()) as number, "SIGKILL");
    const after = await run(pool, [open("/")]);
    expect(after.summary).to.equal("1 step passed");
    expect(pool.launches).to.equal(3);
  });

  it("gives a browser test no result when the browser cannot start (CHROMIUM_PATH wrong), saying why", async () => {
    const pool = new BrowserPool({ executablePath: "/nonexistent/chromium", contexts: 1 });
    pools.push(pool);
    // Not the test's fault: no FAILED result (the executor hands the test back: executor.ts).
    const error = await run(pool, [open("/")]).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).to.be.instanceOf(BrowserUnavailable);
    expect((error as Error).message).to.equal("the browser is not installed (no file at CHROMIUM_PATH)");
    expect(pool.open, "its slot freed").to.equal(0);
    // The check at start says the same, and names no path.
    const launched = await pool.launch().then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(launched?.message).to.equal("the browser is not installed (no file at CHROMIUM_PATH)");
  });

  it("says why a launch failed in words without its path: not executable, a missing library, too slow", () => {
    expect(
      launchFailure(new Error("browserType.launch: Failed to launch: Error: spawn /opt/x EACCES")),
    ).to.equal("the browser cannot be executed (CHROMIUM_PATH: permission denied)");
    expect(
      launchFailure(
        new Error(
          "browserType.launch: Target page, context or browser has been closed\nBrowser logs:\n/opt/x/chrome: error while loading shared libraries: libnss3.so: cannot open shared object file",
        ),
      ),
    ).to.equal("the browser is missing a system library (libnss3.so)");
    expect(launchFailure(new Error("browserType.launch: Timeout 30000ms exceeded."))).to.equal(
      "the browser did not start within 30 s",
    );
    expect(
      launchFailure(new Error("browserType.launch: Target page, context or browser has been closed")),
    ).to.equal("the browser exited as it started");
  });

  it("says only causes the runs service accepts (it refuses others), leaving out a library name that is not one", () => {
    const causes = [
      "spawn /opt/x ENOENT",
      "spawn /opt/x EACCES",
      "error while loading shared libraries: libatk-1.0.so.0: cannot open shared object file",
      "error while loading shared libraries: support.evil.example: cannot open shared object file",
      "Timeout 30000ms exceeded.",
      "Target page, context or browser has been closed",
    ].map((text) => launchFailure(new Error(`browserType.launch: ${text}`)));
    expect(causes).to.include("the browser is missing a system library (libatk-1.0.so.0)");
    expect(causes).to.include("the browser is missing a system library");
    for (const cause of [...causes, browserCauses.stopping])
      expect(isKnownKindCause(cause), cause).to.equal(true);
  });
});
