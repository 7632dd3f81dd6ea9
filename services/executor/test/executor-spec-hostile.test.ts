// Hostile Playwright specs through a real executor (docs/security.md, "User code: Playwright specs"):
// each test() of the spec below tries one thing of the threat model and passes only when it is
// contained. The same spec run by an executor with PLAYWRIGHT_SPECS=unsandboxed shows the attempts
// are real: there it reads the executor's environment and token file and reaches its services.
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { RunStatus, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  type InProcessRunsStack,
  operator,
  type RunsProject,
  seedRunsProject,
  startInProcessRunsStack,
} from "@testrun/testing";
import { expect } from "chai";
import { type BrowserTarget, startBrowserTarget } from "./browser-target.js";
import { type InProcessExecutor, startExecutor } from "./in-process.js";

/** Where a service token would be mounted (a path the sandbox covers), with a canary in it. */
const tokenFolder = `/etc/testrun/hostile-${randomBytes(4).toString("hex")}`;
const canary = `canary-${randomBytes(8).toString("hex")}`;
/** What the spec's leftover process sleeps, a number of seconds no other process on the host uses. */
const leftover = `1000.${Date.now()}`;

/** The host's processes running `sleep <leftover>`. */
async function leftoverProcesses(): Promise<string[]> {
  const found: string[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "");
    if (cmdline.split("\0").includes(leftover)) found.push(name);
  }
  return found;
}

const portOf = (url: string) => Number(new URL(url).port);

/**
 * The spec: every test() passes when what it tries is refused. `harmless`: only the attempts that
 * read or connect (the rest would run loose on the host without the sandbox).
 */
function hostileSpec(ports: { redis: number; database: number; beside: number }, harmless: boolean): string {
  return `import { test, expect } from "@playwright/test";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { connect } from "node:net";

/** "connected", or the error's code. */
const tryConnect = (host: string, port: number) =>
  new Promise<string>((resolve) => {
    const socket = connect({ host, port, timeout: 2000 });
    socket.once("connect", () => { socket.destroy(); resolve("connected"); });
    socket.once("timeout", () => { socket.destroy(); resolve("timeout"); });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
  });

const readable = (path: string) => { try { return readFileSync(path, "utf8"); } catch { return ""; } };

test("reads the executor's environment", async () => {
  expect(readable("/proc/${process.pid}/environ")).toBe("");
  expect(readable("/proc/1/environ")).toBe("");
  expect(JSON.stringify(process.env)).not.toContain("TOKEN");
});

test("reads the service token file", async () => {
  expect(existsSync(${JSON.stringify(tokenFolder)})).toBe(false);
});

test("connects to Redis, the database and a service port beside the executor", async () => {
  for (const port of [${ports.redis}, ${ports.database}, ${ports.beside}])
    expect(await tryConnect("127.0.0.1", port), "port " + port).not.toBe("connected");
});

test("connects to the cloud metadata address", async () => {
  expect(await tryConnect("169.254.169.254", 80)).not.toBe("connected");
});

test("makes a user namespace of its own (CAP_SYS_ADMIN over new mount namespaces)", async () => {
  let made = true;
  try { execFileSync("unshare", ["-Urm", "true"], { stdio: "ignore" }); } catch { made = false; }
  expect(made).toBe(false);
});

${harmless ? "" : unboundedAttempts}`;
}

const unboundedAttempts = `
test("fork-bombs", async () => {
  const children = [];
  try {
    for (let i = 0; i < 5000; i++) {
      const child = spawn("sleep", ["30"], { stdio: "ignore" });
      child.on("error", () => {});
      children.push(child);
    }
  } catch {}
  // Spawns past the process limit fail (EAGAIN): count what runs, then end them.
  const running = readdirSync("/proc").filter((name) => /^\\d+$/.test(name)).length;
  const started = children.filter((child) => child.pid !== undefined);
  for (const child of started) child.kill("SIGKILL");
  await Promise.all(started.map((child) => child.exitCode !== null || child.signalCode !== null ? undefined : new Promise((resolve) => child.once("exit", resolve))));
  expect(running).toBeLessThan(400);
});

test("writes a 10 GB file", async () => {
  try {
    execFileSync("dd", ["if=/dev/zero", "of=big", "bs=1M", "count=10240"], { stdio: "ignore" });
  } catch {}
  expect(statSync("big").size).toBeLessThanOrEqual(256 * 1024 * 1024);
  unlinkSync("big");
});

test("leaves a process running after the test", async () => {
  spawn("setsid", ["sleep", "${leftover}"], { detached: true, stdio: "ignore" }).unref();
});
`;

describe("hostile Playwright specs in the executor's sandbox", function () {
  this.timeout(120_000);
  let stack: InProcessRunsStack;
  let target: BrowserTarget;
  let project: RunsProject;
  let beside: Server;
  const executors: InProcessExecutor[] = [];

  before(async () => {
    stack = await startInProcessRunsStack({}, 6);
    target = await startBrowserTarget();
    beside = createServer((socket) => socket.end("a service beside the executor\n"));
    beside.listen(0, "127.0.0.1");
    await once(beside, "listening");
    await mkdir(tokenFolder, { recursive: true, mode: 0o700 });
    await writeFile(`${tokenFolder}/token`, canary, { mode: 0o600 });
    project = await seedRunsProject(stack);
    await stack.catalog.catalog.createEnvironment({
      actor: operator(),
      projectId: project.projectId,
      name: "web app",
      baseUrl: target.url,
    });
  });
  afterEach(async () => {
    for (const executor of executors.splice(0)) await executor.stop();
  });
  after(async () => {
    await rm(tokenFolder, { recursive: true, force: true });
    await target?.close();
    beside?.close();
    await stack?.stop();
  });

  /** Runs `source` (default: the hostile spec) on an executor started with `env`; its result. */
  async function runHostileSpec(env: Record<string, string>, name: string, given?: string) {
    const executor = await startExecutor(stack, { EGRESS_ALLOW_CIDRS: "127.0.0.2/32", ...env });
    executors.push(executor);
    const ports = {
      redis: portOf(String(process.env.REDIS_URL)),
      database: portOf(String(process.env.DATABASE_URL)),
      beside: (beside.address() as { port: number }).port,
    };
    const source = given ?? hostileSpec(ports, env.PLAYWRIGHT_SPECS === "unsandboxed");
    const { testCase } = await stack.catalog.catalog.createTestCase({
      actor: operator(),
      projectId: project.projectId,
      name,
      playwright: { spec: { path: `tests/${name}.spec.ts`, source } },
    });
    const { run } = await stack.runs.startRun({
      actor: project.key,
      projectId: project.projectId,
      environment: "web app",
      selection: { case: "testCaseIds", value: { ids: [testCase?.id ?? ""] } },
    });
    const ids = { actor: project.key, projectId: project.projectId, runId: run?.id ?? "" };
    let status: RunStatus | undefined;
    for await (const { run: now } of stack.runs.watchRun(ids, { timeoutMs: 0 })) status = now?.status;
    const { test } = await stack.runs.getTestResult({ ...ids, testResultId: run?.tests[0]?.id ?? "" });
    return { status, test };
  }

  it("contains each attempt: no environment, token, service, metadata address, user namespace; bounded processes and files; nothing left running", async () => {
    const { status, test } = await runHostileSpec({}, "hostile");
    expect(
      test?.stepResults.map((step) => [step.name, step.status, step.error]),
      test?.summary,
    ).to.deep.equal([
      ["reads the executor's environment", TestStatus.PASSED, ""],
      ["reads the service token file", TestStatus.PASSED, ""],
      ["connects to Redis, the database and a service port beside the executor", TestStatus.PASSED, ""],
      ["connects to the cloud metadata address", TestStatus.PASSED, ""],
      ["makes a user namespace of its own (CAP_SYS_ADMIN over new mount namespaces)", TestStatus.PASSED, ""],
      ["fork-bombs", TestStatus.PASSED, ""],
      ["writes a 10 GB file", TestStatus.PASSED, ""],
      ["leaves a process running after the test", TestStatus.PASSED, ""],
    ]);
    expect(status).to.equal(RunStatus.PASSED);
    expect(await leftoverProcesses(), "the process the spec left running").to.deep.equal([]);
    expect([test?.summary, ...(test?.stepResults.map((step) => step.error) ?? [])].join("\n")).not.to.include(
      canary,
    );
  });

  it("fails a spec that fills its folder, saying its report could not be read, in one attempt", async () => {
    const filler = `import { test } from "@playwright/test";
import { execFileSync } from "node:child_process";
test("fills the disk and leaves it full", async () => {
  try { execFileSync("dd", ["if=/dev/zero", "of=full", "bs=1M", "count=1024"], { stdio: "ignore" }); } catch {}
});
`;
    const { status, test } = await runHostileSpec({}, "filler", filler);
    expect(status).to.equal(RunStatus.FAILED);
    expect(test?.attempt, "one attempt: the spec's failure, not the executor's").to.equal(1);
    expect(test?.summary).to.equal(
      "the Playwright runner's report could not be read (SyntaxError): the spec may have filled its folder or written over the report",
    );
  });

  it("fails a spec of more test()s than a test reports, saying so, in one attempt", async () => {
    const many = `import { test } from "@playwright/test";
for (let i = 1; i <= 201; i++) test("t" + i, async () => {});
`;
    const { status, test } = await runHostileSpec({}, "too-many", many);
    expect(status).to.equal(RunStatus.FAILED);
    expect(test?.attempt).to.equal(1);
    expect(test?.summary).to.equal(
      "the spec has 201 test()s, more than the 200 one test case reports: split it into several spec files",
    );
    expect(test?.stepResults).to.have.length(200);
  });

  it("keeps no trace the spec forged (not a zip), and the test's result stands", async () => {
    const forged = `import { test } from "@playwright/test";
import { writeFileSync } from "node:fs";
test("attaches a trace of its own", async ({}, info) => {
  writeFileSync(info.outputPath("junk.zip"), "PK-not-a-zip");
  await info.attach("trace", { path: info.outputPath("junk.zip"), contentType: "application/zip" });
});
`;
    const { status, test } = await runHostileSpec({}, "forged-trace", forged);
    expect(status).to.equal(RunStatus.PASSED);
    expect(test?.attempt).to.equal(1);
    expect(test?.stepResults.map((step) => step.status)).to.deep.equal([TestStatus.PASSED]);
  });

  it("is no empty claim: unsandboxed, the same spec reads the environment and the token file, reaches the services and makes a user namespace", async () => {
    const { test } = await runHostileSpec({ PLAYWRIGHT_SPECS: "unsandboxed" }, "hostile-unsandboxed");
    const failed = test?.stepResults
      .filter((step) => step.status === TestStatus.FAILED)
      .map((step) => step.name);
    expect(failed).to.include.members([
      "reads the executor's environment",
      "reads the service token file",
      "connects to Redis, the database and a service port beside the executor",
      "makes a user namespace of its own (CAP_SYS_ADMIN over new mount namespaces)",
    ]);
  });
});
