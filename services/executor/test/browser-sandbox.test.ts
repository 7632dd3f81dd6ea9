// Chromium's own sandbox (docs/security.md, "The browser's sandbox"), checked on the real processes:
// the pages' renderers run in user and PID namespaces of their own under seccomp-BPF, as a user
// that is not root; the browser holds none of the executor's environment; a sandbox that cannot
// start fails the launch, saying so, instead of running without one.
import { chmod, mkdtemp, readdir, readFile, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { browserCauses, isKnownKindCause } from "@testrun/kit";
import { expect } from "chai";
import { BrowserPool, BrowserUnavailable } from "../src/browser/pool.js";
import { type BrowserTarget, chromiumPath, startBrowserTarget } from "./browser-target.js";

interface Proc {
  pid: number;
  ppid: number;
  cmdline: string;
  status: string;
}

/** Every process this one started, directly or not (its browsers, their renderers, …). */
async function descendants(): Promise<Proc[]> {
  const all: Proc[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, "utf8");
      all.push({
        pid: Number(entry),
        ppid: Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]),
        cmdline: (await readFile(`/proc/${entry}/cmdline`, "utf8")).replaceAll("\0", " "),
        status: await readFile(`/proc/${entry}/status`, "utf8"),
      });
    } catch {
      // Gone meanwhile.
    }
  }
  const ours = new Set([process.pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const proc of all)
      if (!ours.has(proc.pid) && ours.has(proc.ppid)) {
        ours.add(proc.pid);
        grew = true;
      }
  }
  return all.filter((proc) => proc.pid !== process.pid && ours.has(proc.pid));
}

/** The browsers Playwright started from this process (not their helpers, nor tsx's esbuild). */
const browserProcesses = async () =>
  (await descendants()).filter(
    (proc) =>
      proc.ppid === process.pid &&
      proc.cmdline.includes("--remote-debugging-pipe") &&
      !proc.cmdline.includes("--type="),
  );

const field = (status: string, name: string) => new RegExp(`^${name}:\\s*(.*)$`, "m").exec(status)?.[1];

describe("browser sandbox (chromium's own, for the pages of browser tests)", function () {
  this.timeout(60_000);
  let target: BrowserTarget;
  const pools: BrowserPool[] = [];
  const newPool = (options: Partial<ConstructorParameters<typeof BrowserPool>[0]> = {}) => {
    const pool = new BrowserPool({ executablePath: chromiumPath, contexts: 2, ...options });
    pools.push(pool);
    return pool;
  };
  const root = process.getuid?.() === 0;
  // As root the browser runs as the default BROWSER_UID (nobody); otherwise as this process's user.
  const browserUid = root ? 65534 : process.getuid?.();

  before(async () => {
    target = await startBrowserTarget();
  });
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.close()));
  });
  after(() => target?.close());

  it("says the page is adequately sandboxed, and its renderer runs in namespaces of its own under seccomp, not as root", async () => {
    const pool = newPool();
    const pooled = await pool.openContext(new AbortController().signal, "prj_a");
    try {
      const page = await pooled.context.newPage();
      // Chromium's own report, for the renderer of this very page.
      await page.goto("chrome://sandbox");
      const report = await page.locator("body").innerText();
      expect(report).to.include("You are adequately sandboxed.");
      expect(report).to.match(/Layer 1 Sandbox\s*Namespace/);
      expect(report).to.match(/Seccomp-BPF sandbox\s*Yes/);

      await page.goto(`${target.url}/`);
      const renderers = (await descendants()).filter((proc) => proc.cmdline.includes("--type=renderer"));
      expect(renderers, "the page's renderer").to.not.be.empty;
      const own = { user: await readlink("/proc/self/ns/user"), pid: await readlink("/proc/self/ns/pid") };
      let checked = 0;
      for (const renderer of renderers) {
        // The chrome://sandbox page's renderer may be ending as the page moved to another site.
        const namespaces = await Promise.all(
          ["user", "pid"].map((ns) => readlink(`/proc/${renderer.pid}/ns/${ns}`)),
        ).catch(() => undefined);
        if (!namespaces) continue;
        checked += 1;
        expect(field(renderer.status, "Uid")?.split(/\s+/), "real, effective, saved, fs uid").to.deep.equal(
          Array(4).fill(String(browserUid)),
        );
        expect(field(renderer.status, "Seccomp"), "seccomp filter mode").to.equal("2");
        expect(field(renderer.status, "NoNewPrivs")).to.equal("1");
        expect(namespaces[0], "user namespace").to.not.equal(own.user);
        expect(namespaces[1], "PID namespace").to.not.equal(own.pid);
        // Inside its PID namespace it sees itself as a low pid, not as the executor's pid numbers.
        expect(field(renderer.status, "NSpid")?.split(/\s+/).length).to.be.greaterThan(1);
      }
      expect(checked, "the page's renderer, alive").to.be.greaterThan(0);
    } finally {
      await pooled.close();
    }
  });

  it("runs the browser as a user without capabilities and without the executor's environment", async () => {
    const canary = "EXECUTOR_TOKEN_CANARY_f3b9c2";
    process.env.TESTRUN_SANDBOX_CANARY = canary;
    try {
      const pool = newPool();
      await pool.launch();
      const [browser] = await browserProcesses();
      expect(browser, "the browser process").to.not.equal(undefined);
      const status = browser?.status ?? "";
      expect(field(status, "Uid")?.split(/\s+/)[1], "effective uid").to.equal(String(browserUid));
      expect(field(status, "CapEff"), "no effective capability").to.equal("0000000000000000");
      if (root) expect(field(status, "CapBnd"), "none left to gain").to.equal("0000000000000000");
      const environ = await readFile(`/proc/${browser?.pid}/environ`, "utf8");
      expect(environ).to.not.include(canary);
      for (const name of ["REDIS_URL", "DATABASE_URL", "EXECUTOR_TOKEN", "TESTRUN_SANDBOX_CANARY"])
        expect(environ).to.not.include(`${name}=`);
    } finally {
      delete process.env.TESTRUN_SANDBOX_CANARY;
    }
  });

  it("fails the launch, saying the sandbox could not start, rather than run chromium without it", async () => {
    // A chromium that finds itself root (in a user namespace of its own) refuses its sandbox, as
    // one without user namespaces does: the pool says why and does not fall back to --no-sandbox.
    const dir = await mkdtemp(join(tmpdir(), "testrun-sandbox-test-"));
    await chmod(dir, 0o755); // the browser's user runs the script
    try {
      const asRoot = join(dir, "chromium-as-root");
      await writeFile(asRoot, `#!/bin/sh\nexec unshare --user --map-root-user ${chromiumPath} "$@"\n`, {
        mode: 0o755,
      });
      const pool = newPool({ executablePath: asRoot });
      const failure = await pool.launch().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).to.be.instanceOf(BrowserUnavailable);
      expect((failure as Error).message, String((failure as Error).cause)).to.equal(
        "the browser's sandbox could not start (user namespaces unavailable)",
      );
      expect((failure as Error).message).to.equal(browserCauses.noSandbox);
      expect(isKnownKindCause((failure as Error).message), "a cause the runs service accepts").to.equal(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("launches with --no-sandbox only when told to (BROWSER_SANDBOX=off)", async () => {
    const sandboxed = newPool();
    await sandboxed.launch();
    const off = newPool({ sandbox: { enabled: false, uid: 65534, gid: 65534 } });
    await off.launch();
    const browsers = await browserProcesses();
    expect(browsers).to.have.length(2);
    expect(browsers.filter((proc) => proc.cmdline.includes("--no-sandbox"))).to.have.length(1);
  });
});
