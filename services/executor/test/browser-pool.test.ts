// The executor's browsers and their contexts: a fresh context per test, at most BROWSER_CONTEXTS
// at once (a test waits for one under its deadline), a browser process never running two
// projects' tests at once, at most BROWSER_PROCESSES of them, and a browser that crashed launched again.

import { readdir, readFile } from "node:fs/promises";
import { browserCauses, isKnownKindCause } from "@testrun/kit";
import { expect } from "chai";
import { BrowserLost, BrowserPool, BrowserUnavailable, launchFailure } from "../src/browser/pool.js";
import { runSteps } from "../src/steps/runner.js";
import {
  type BrowserTarget,
  browserTargetEgress,
  chromiumPath,
  killBrowser,
  startBrowserTarget,
  stepsOf,
} from "./browser-target.js";

/** The pids of the browsers this process started (its Chromium children, not their helpers). */
async function browserPids(): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (ppid === process.pid && cmdline.includes("--remote-debugging-pipe")) pids.push(Number(entry));
  }
  return pids.sort();
}

describe("browser pool (a browser process per project at a time, a context per test)", function () {
  this.timeout(60_000);
  let target: BrowserTarget;
  const pools: BrowserPool[] = [];
  const newPool = (contexts: number, browsers?: number) => {
    const pool = new BrowserPool({ executablePath: chromiumPath, contexts, browsers });
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
  const homeHits = () => target.hits.filter((hit) => hit === "GET /").length;
  /** Waits for a state the pool reaches on its own (no event says so), checking every 10 ms. */
  const waitUntil = async (done: () => boolean) => {
    for (let i = 0; !done(); i++) {
      if (i > 1_000) throw new Error("not reached within 10 s");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

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

  const gateHits = () => target.hits.filter((hit) => hit === "GET /gate").length;

  it("runs tests of two projects at the same time in two browser processes, never in one", async () => {
    const pool = newPool(4);
    const before = gateHits();
    const tests = [
      run(pool, [open("/gate", 30_000)], undefined, "prj_a"),
      run(pool, [open("/gate", 30_000)], undefined, "prj_b"),
    ];
    await target.hitsOf("/gate", before + 2);
    expect(pool.open).to.equal(2);
    expect([...pool.browsers].sort()).to.deep.equal(["prj_a", "prj_b"]);
    expect(await browserPids(), "two browser processes").to.have.length(2);
    target.openGate();
    target.openGate();
    expect((await Promise.all(tests)).map((outcome) => outcome.summary)).to.deep.equal([
      "1 step passed",
      "1 step passed",
    ]);
  });

  it("runs tests of one project together in its browser, and a test of another in a browser of its own", async () => {
    const pool = newPool(4);
    const signal = new AbortController().signal;
    const a1 = await pool.openContext(signal, "prj_a");
    const a2 = await pool.openContext(signal, "prj_a");
    const b = await pool.openContext(signal, "prj_b");
    try {
      expect(a2.browser, "one browser for the project's tests").to.equal(a1.browser);
      expect(b.browser, "another for the other project's").to.not.equal(a1.browser);
      expect(pool.launches).to.equal(2);
      expect(await browserPids()).to.have.length(2);
    } finally {
      await Promise.all([a1.close(), a2.close(), b.close()]);
    }
    // Idle, the project's browser is kept for its next test.
    const again = await pool.openContext(signal, "prj_a");
    expect(again.browser).to.equal(a1.browser);
    await again.close();
    expect(pool.launches).to.equal(2);
  });

  it("bounds the browser processes (BROWSER_PROCESSES): another project's test waits for an idle browser, which is closed for a new one", async () => {
    const pool = newPool(2, 1);
    const before = gateHits();
    const first = run(pool, [open("/gate", 30_000)], undefined, "prj_a");
    await target.hitsOf("/gate", before + 1);
    const homeBefore = homeHits();
    const second = run(pool, [open("/")], undefined, "prj_b");
    // A context is free, but the only browser runs prj_a's test: prj_b's waits.
    await waitUntil(() => pool.waiting === 1);
    expect(pool.browsers).to.deep.equal(["prj_a"]);
    expect(homeHits(), "prj_b's page not opened yet").to.equal(homeBefore);
    const firstPid = await browserPids();
    target.openGate();
    expect((await first).summary).to.equal("1 step passed");
    expect((await second).summary).to.equal("1 step passed");
    expect(pool.browsers, "prj_a's browser closed, prj_b's launched").to.deep.equal(["prj_b"]);
    expect(pool.launches).to.equal(2);
    expect(await browserPids())
      .to.have.length(1)
      .and.not.deep.equal(firstPid);
  });

  it("ends a test waiting for another project's browser to turn idle at its deadline", async () => {
    const pool = newPool(2, 1);
    const before = gateHits();
    const holder = run(pool, [open("/gate", 30_000)], undefined, "prj_a");
    await target.hitsOf("/gate", before + 1);
    const waiting = await run(pool, [open("/")], 500, "prj_b");
    expect(waiting).to.include({
      passed: false,
      summary: 'step 1 "open /": the test ran past its deadline of 500 ms',
    });
    expect(pool.waiting).to.equal(0);
    expect(pool.open, "its context slot freed").to.equal(1);
    target.openGate();
    expect((await holder).passed).to.equal(true);
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
    await killBrowser();
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
    await killBrowser();
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
      "Target page, context or browser has been closed\nBrowser logs:\n[12:12:0101/000000.0:FATAL:zygote_host_impl_linux.cc(132)] No usable sandbox! If you are running on Ubuntu 23.10+ …",
    ].map((text) => launchFailure(new Error(`browserType.launch: ${text}`)));
    expect(causes).to.include("the browser is missing a system library (libatk-1.0.so.0)");
    expect(causes).to.include("the browser is missing a system library");
    expect(causes).to.include("the browser's sandbox could not start (user namespaces unavailable)");
    for (const cause of [...causes, browserCauses.stopping])
      expect(isKnownKindCause(cause), cause).to.equal(true);
  });
});
