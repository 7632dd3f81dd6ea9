// `make bench`: figures for the run path, measured on this machine against the whole system as the
// image runs it (every service its own process, the built code started by services/kit/dist/
// launch.js with NODE_ENV=production; throwaway PostgreSQL and Redis unless DATABASE_URL /
// REDIS_URL are set), side by side with the floors of scripts/bench/floor.ts in the same run.
// It prints figures and asserts none: timings on shared machines vary too much to fail a build on.
//
// Phases, in this order:
// 1. reads: GET /v1/runs/:id of a finished run with 2 tests on the read floor and through the
//    gateway, and GET /v1/environments through the gateway, each at 50 connections;
// 2. the executor: a 200-test run (one GET /health step each, on the demo target) from start to
//    finished, with the one executor process at its default CONCURRENCY;
// 3. starts: POST /v1/runs (the same 2 tests) through the gateway and on the start floor, at 50
//    connections. The executor is stopped first: started tests then wait in the stream, and the
//    figure is the starts' alone, not shared with executing tests on the same cores.
// Between 2 and 3, the growth table (bench/growth.ts): runs of several sizes with 0, 5 and 20
// watchers, and the executor's floor (which stops the executor).
// Then every process's resident memory. Each load is preceded by a short warm-up at the same
// concurrency, outside the figures.
//
// PROFILE=1 (`make bench PROFILE=1`) runs the gateway, runs, catalog and billing services under
// --cpu-prof, stops after the reads (so the profiles are of the read load, plus start-up and
// seeding) and prints the 10 functions of each with the most self time; PROFILE=starts does the
// same for the start load alone. The .cpuprofile files stay in bench-profiles/.
//
// 4. browser tests (bench/browser.ts): browser tests a minute of an executor process against a
//    floor driving the same Chromium, and the executor's memory, at 1, 2 and 4 browser contexts
//    (BENCH_BROWSER_CONTEXTS, BENCH_BROWSER_TESTS); BENCH_ONLY=browser runs it alone. Then the
//    browser pool with tests of one, two and many projects (bench/browser-projects.ts;
//    BENCH_PROJECTS_TESTS, BENCH_PROJECTS_CONTEXTS; BENCH_ONLY=browser-projects), and Playwright
//    specs a minute of an executor process, sandboxed and unsandboxed, against `playwright test`
//    run directly, and the executor's memory (bench/specs.ts; BENCH_SPECS, BENCH_SPECS_CONCURRENCY;
//    BENCH_ONLY=specs).
// 5. the cost of metrics (bench/metrics.ts): the read load with every /metrics on and with
//    METRICS_PORT=0, CPU time per request of each, and a /metrics scrape's time under that load;
//    BENCH_ONLY=metrics runs it alone (on systems of its own).
// 6. automation (bench/automation.ts): webhook latency and deliveries per second per replica, delivery
//    through a receiver answering 500 and then nothing before it recovers, and 1,000 schedules on two
//    replicas, tick by tick; on a system of its own. BENCH_ONLY=automation runs it alone;
//    BENCH_AUTOMATION_RUNS (100), BENCH_AUTOMATION_DRAIN (500), BENCH_SCHEDULE_TICKS (2) size it.
// 7. test health (bench/health.ts): a seeded history of BENCH_HEALTH_RESULTS results (1,000,000):
//    p50/p99 of a case's history, the health page and a 500-test run's read, and the CPU per
//    completed test with the health trigger on and off; BENCH_ONLY=health runs it alone.
// BENCH_ONLY=growth runs the growth table alone (with PROFILE=growth: the runs, gateway and console
// services profiled under it); BENCH_GROWTH_SIZES (default 20,100,500) and BENCH_GROWTH_WATCHERS
// (default 0,5,20) choose its rows.
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { createCliContext, createTestCases, grantCredits, readTestCaseFile } from "@testrun/cli";
import { Health } from "@testrun/gen/grpc/health/v1/health_pb";
import { serviceClient } from "@testrun/kit";
import {
  createTestDatabase,
  repoRoot,
  type ServiceProcess,
  startServiceProcess,
  startThrowawayPostgres,
  startThrowawayRedis,
  type ThrowawayServer,
} from "@testrun/testing";
import { abuseTable } from "./bench/abuse.js";
import { automationTable } from "./bench/automation.js";
import { browserTable } from "./bench/browser.js";
import { browserProjectsTable } from "./bench/browser-projects.js";
import { growthTable } from "./bench/growth.js";
import { healthTable } from "./bench/health.js";
import { cpuMs, type LoadResult, load, rssMiB, topSelfTime, writeCalls } from "./bench/measure.js";
import { MemoryLimits } from "./bench/memory-limit.js";
import { metricsTable } from "./bench/metrics.js";
import { enterBenchPart, reportFailedBenchPart } from "./bench/part.js";
import { specsTable } from "./bench/specs.js";
import { seedDemo } from "./demo/seed.js";
import { serviceNames } from "./services.js";
import { type System, startSystem } from "./system.js";

reportFailedBenchPart();

const connections = 50;
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const warmupSeconds = 2;
const executorTests = 200;
/** PROFILE=1 (or reads) profiles the read loads, PROFILE=starts the start load, PROFILE=growth the growth table. */
const profile = process.env.PROFILE === "1" ? "reads" : process.env.PROFILE || undefined;
/** BENCH_ONLY=growth: the growth table alone; BENCH_ONLY=path: the reads, the executor, the growth table and the starts. */
const benchOnly = process.env.BENCH_ONLY || (profile === "growth" ? "growth" : undefined);
const pathOnly = benchOnly === "path";
const only = pathOnly ? undefined : benchOnly;
const profiled =
  profile === "growth"
    ? ["gateway", "runs", "console", "executor", "catalog"]
    : ["gateway", "runs", "catalog", "billing"];
const numbers = (value: string | undefined, fallback: number[]) =>
  value ? value.split(",").map((n) => Number(n.trim())) : fallback;
const profileDir = join(repoRoot, "bench-profiles");
const launcher = join(repoRoot, "services/kit/dist/launch.js");
/** BENCH_MEMORY_LIMIT_MIB: every service under that memory limit, as in a pod (bench/memory-limit.ts). */
const memoryLimits = process.env.BENCH_MEMORY_LIMIT_MIB
  ? new MemoryLimits(Number(process.env.BENCH_MEMORY_LIMIT_MIB))
  : undefined;

const owned: ThrowawayServer[] = [];
let system: System | undefined;
let floor: ServiceProcess | undefined;

/** `count` one-step test cases tagged `tag`, expecting `status` from GET /health (not 200: they fail). */
const yamlOf = (tag: string, count: number, status = 200) =>
  Array.from(
    { length: count },
    (_, i) =>
      `- name: ${tag} ${i}\n  tags: [${tag}]\n  steps:\n    - name: get health\n      http: { method: GET, path: /health }\n      expect: { status: ${status} }\n`,
  ).join("");

try {
  if (!existsSync(launcher))
    throw new Error(`${launcher} is missing: run \`npm run build\` (make bench does)`);
  if (profile) rmSync(profileDir, { recursive: true, force: true });
  const postgres = process.env.DATABASE_URL ? undefined : await startThrowawayPostgres();
  const redis = process.env.REDIS_URL ? undefined : await startThrowawayRedis();
  owned.push(...[postgres, redis].filter((s): s is ThrowawayServer => s !== undefined));
  const databaseUrl = await createTestDatabase(process.env.DATABASE_URL ?? postgres?.url ?? "");
  const redisUrl = process.env.REDIS_URL ?? redis?.url ?? "";
  // Known to this process too: the read floor opens the gateway's verified-key cache entries.
  process.env.KEY_CACHE_SECRET ??= randomBytes(32).toString("base64url");
  system = await startSystem({
    databaseUrl,
    redisUrl,
    ports: "free",
    keepOutput: false,
    // The figures are the system's, not the per-key rate limit's.
    extraEnv: {
      RATE_LIMIT_PER_MINUTE: "1000000",
      WAITS_PER_KEY: "100",
      WAITS_PER_PROJECT: "100",
      NODE_ENV: "production",
    },
    launch: (service) => {
      const args = [
        ...(profile && profiled.includes(service)
          ? ["--cpu-prof", `--cpu-prof-dir=${join(profileDir, service)}`]
          : []),
        ...(process.env.BENCH_NODE_FLAGS ?? "").split(" ").filter(Boolean),
        launcher,
        service,
      ];
      return {
        ...(memoryLimits?.wrap(service, process.execPath, args) ?? { file: process.execPath, args }),
        cwd: repoRoot,
      };
    },
  });
  floor = await startServiceProcess(
    "floor",
    { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, KEY_CACHE_SECRET: process.env.KEY_CACHE_SECRET },
    { keepOutput: false, entry: "scripts/bench/floor.ts" },
  );
  const processes = new Map([...system.processes, ["floor", floor]]);
  processes.delete("demo-target");
  // This process reads the services' log lines from their pipes: its CPU time is shown too.
  const pids = new Map([
    ...[...processes].map(([n, child]) => [n, child.process.pid] as const),
    ["bench", process.pid],
  ]);
  const idle = new Map([...processes].map(([name, child]) => [name, rssMiB(child.process.pid)]));

  const gateway = system.gatewayUrl;
  const { projectId, secret, ownerMemberId } = await seedDemo(system.env, system.demoTargetUrl);
  const ctx = createCliContext(system.env);
  await grantCredits(ctx, { projectId, amount: 10_000_000, reason: "benchmark" });
  const parse = (tag: string, count: number, status?: number) =>
    readTestCaseFile(yamlOf(tag, count, status), `${tag}.yaml`);
  const pair = await createTestCases(ctx, { projectId, testCases: parse("pair", 2) });
  await createTestCases(ctx, { projectId, testCases: parse("many", executorTests) });
  const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
  const pairBody = JSON.stringify({ testCaseIds: pair.map((testCase) => testCase.id) });

  const call = async (url: string, init: RequestInit = {}) => {
    const res = await fetch(url, { headers, ...init });
    const body = (await res.json()) as { id?: string; finished?: boolean };
    if (res.status >= 300)
      throw new Error(`${init.method ?? "GET"} ${url}: HTTP ${res.status}: ${JSON.stringify(body)}`);
    return body;
  };
  const startRun = (body: string) => call(`${gateway}/v1/runs`, { method: "POST", body });
  const finish = async (id: string) => {
    let finished = false;
    while (!finished) finished = (await call(`${gateway}/v1/runs/${id}?wait=30`)).finished === true;
  };

  const loadAverage = () =>
    loadavg()
      .map((value) => value.toFixed(1))
      .join(" ");
  console.log(
    `Testrun benchmark (${new Date().toISOString()}, Node ${process.versions.node}, built services, ` +
      `${connections} connections, ${seconds} s a load; ${availableParallelism()} CPUs, ` +
      `${(totalmem() / 2 ** 30).toFixed(0)} GiB, load average ${loadAverage()} before)\n`,
  );

  // Figures of one load: its result and the CPU time each process spent on it, per request.
  interface Figure {
    name: string;
    result: LoadResult;
    cpuPerRequest: Map<string, number>;
    writesPerRequest: Map<string, number>;
    floor?: string;
  }
  const figures: Figure[] = [];
  const measure = async (name: string, url: string, options: { body?: string; floor?: string } = {}) => {
    const method = options.body === undefined ? "GET" : "POST";
    const request = {
      url,
      method,
      headers,
      connections,
      ...(options.body && { body: options.body }),
    } as const;
    await load({ ...request, seconds: warmupSeconds });
    const before = new Map([...pids].map(([n, pid]) => [n, cpuMs(pid)]));
    const writesBefore = new Map([...pids].map(([n, pid]) => [n, writeCalls(pid)]));
    const result = await load({ ...request, seconds });
    const requests = result.requestsPerSecond * seconds;
    const perRequest = (counter: (pid: number | undefined) => number, start: Map<string, number>) =>
      new Map([...pids].map(([n, pid]) => [n, (counter(pid) - (start.get(n) ?? 0)) / requests]));
    figures.push({
      name,
      result,
      cpuPerRequest: perRequest(cpuMs, before),
      writesPerRequest: perRequest(writeCalls, writesBefore),
      ...(options.floor && { floor: options.floor }),
    });
  };

  // The floor finds the key in the cache the gateway fills: one request through the gateway first.
  await call(`${gateway}/v1/environments`);

  // 1. Reads.
  enterBenchPart("the reads");
  if (!only && profile !== "starts") {
    const readRun = await startRun(pairBody);
    await finish(String(readRun.id));
    const runPath = `/v1/runs/${readRun.id}`;
    await call(`${floor.url}${runPath}`);
    await measure("read floor: GET /v1/runs/:id", `${floor.url}${runPath}`);
    await measure("gateway GET /v1/runs/:id (finished, 2 tests)", `${gateway}${runPath}`, {
      floor: "read floor: GET /v1/runs/:id",
    });
    await measure("gateway GET /v1/environments", `${gateway}/v1/environments`, {
      floor: "read floor: GET /v1/runs/:id",
    });
  }

  // 2. The executor.
  enterBenchPart("the executor");
  let executorLine = "";
  if (!profile && !only) {
    const big = await startRun(JSON.stringify({ tags: ["many"] }));
    const began = performance.now();
    const before = new Map([...pids].map(([n, pid]) => [n, cpuMs(pid)]));
    await finish(String(big.id));
    const ms = performance.now() - began;
    const perTest = ["executor", "runs"]
      .map((n) => `${n} ${((cpuMs(pids.get(n)) - (before.get(n) ?? 0)) / executorTests).toFixed(2)} ms`)
      .join(", ");
    executorLine =
      `executor: ${executorTests} one-step tests in ${(ms / 1000).toFixed(1)} s, ` +
      `${((executorTests / ms) * 1000).toFixed(0)} tests/s per executor process (CONCURRENCY 4); ` +
      `CPU time per test: ${perTest}`;
  }

  // The growth table; it stops the executor for its floor.
  const after = new Map<string, number>();
  const executor = processes.get("executor");
  // Slow and idle clients against the HTTP ports and the runs service's gRPC port (bench/abuse.ts).
  if (only === "abuse" || (!profile && !only && !pathOnly)) {
    enterBenchPart("the abuse table");
    const runsPort = Number(system.serviceEnvs.get("runs")?.PORT);
    const health = serviceClient(Health, `http://127.0.0.1:${runsPort}`, {
      token: String(system.env.SERVICE_TOKEN),
      timeoutMs: 10_000,
    });
    const http = (url: URL) => ({ host: url.hostname, port: Number(url.port) });
    await abuseTable(
      [
        {
          name: "gateway",
          ...http(new URL(gateway)),
          pid: pids.get("gateway"),
          path: "/v1/runs",
          kinds: ["slow body", "slow headers", "idle"],
          legit: async () => (await fetch(`${gateway}/v1/project`, { headers })).status,
        },
        {
          name: "console",
          ...http(new URL(system.consoleUrl)),
          pid: pids.get("console"),
          path: "/api/testrun.console.v1.ConsoleService/ListProjects",
          kinds: ["slow body", "slow headers", "idle"],
          legit: async () => (await fetch(`${system?.consoleUrl}/healthz`)).status,
        },
        {
          name: "runs (gRPC)",
          host: "127.0.0.1",
          port: runsPort,
          pid: pids.get("runs"),
          path: "/",
          kinds: ["idle"],
          legit: async () => {
            await health.check({});
            return 200;
          },
        },
      ],
      numbers(process.env.BENCH_ABUSE_COUNTS, [1_000, 4_000, 15_000]),
    );
  }

  if (only === "growth" || (!profile && !only)) {
    enterBenchPart("the growth table");
    after.set("executor", rssMiB(executor?.process.pid));
    await growthTable({
      system,
      databaseUrl,
      redisUrl,
      projectId,
      ownerMemberId,
      secret,
      sizes: numbers(process.env.BENCH_GROWTH_SIZES, [20, 100, 500]),
      watchers: numbers(process.env.BENCH_GROWTH_WATCHERS, [0, 5, 20]),
    });
  }

  // Test health: a seeded history's reads, and the health trigger's cost per completed test.
  if (only === "health" || (!profile && !only && !pathOnly)) {
    enterBenchPart("the test-health table");
    await createTestCases(ctx, { projectId, testCases: parse("health500", 500) });
    await createTestCases(ctx, { projectId, testCases: parse("health200", 200) });
    // Failing ones (they expect 418): the failure groups' cost per failed test.
    await createTestCases(ctx, { projectId, testCases: parse("fail200", 200, 418) });
    await healthTable({
      system,
      databaseUrl,
      projectId,
      results: Number(process.env.BENCH_HEALTH_RESULTS ?? 1_000_000),
      runsCpuMs: () => cpuMs(pids.get("runs")),
      runTagged: async (tag) => {
        const run = await startRun(JSON.stringify({ tags: [tag] }));
        await finish(String(run.id));
        const listed = (await call(`${gateway}/v1/runs?limit=1`)) as { runs?: { environmentId?: string }[] };
        return { id: String(run.id), environmentId: String(listed.runs?.[0]?.environmentId) };
      },
    });
  }

  // 3. Starts, with the executor stopped.
  enterBenchPart("the starts");
  if (!only && profile !== "reads" && profile !== "growth") {
    if (!after.has("executor")) after.set("executor", rssMiB(executor?.process.pid));
    await executor?.stop();
    await measure("start floor: POST /v1/runs (2 tests)", `${floor.url}/v1/runs`, { body: pairBody });
    await measure("gateway POST /v1/runs (2 tests)", `${gateway}/v1/runs`, {
      body: pairBody,
      floor: "start floor: POST /v1/runs (2 tests)",
    });
  }
  for (const [name, child] of processes) if (!after.has(name)) after.set(name, rssMiB(child.process.pid));

  const names = [...processes.keys()];
  if (figures.length > 0) {
    const ms = (value: number) => `${value.toFixed(0)} ms`;
    console.log("| load | req/s | p50 | p99 | of the floor's req/s | p99 / floor's | failed |");
    console.log("| --- | --- | --- | --- | --- | --- | --- |");
    for (const { name, result, floor: floorName } of figures) {
      const base = figures.find((f) => f.name === floorName)?.result;
      const ratio = base ? `${((result.requestsPerSecond / base.requestsPerSecond) * 100).toFixed(0)}%` : "";
      const p99Ratio = base ? `${(result.p99 / base.p99).toFixed(1)}×` : "";
      console.log(
        `| ${name} | ${result.requestsPerSecond.toFixed(0)} | ${ms(result.p50)} | ${ms(result.p99)} | ${ratio} | ${p99Ratio} | ${result.failed} |`,
      );
    }
    const cpuNames = [...pids.keys()];
    const perProcess = (title: string, pick: (figure: Figure) => Map<string, number>, digits: number) => {
      console.log(`\n${title}:\n\n| load | ${cpuNames.join(" | ")} |`);
      console.log(`| --- |${" --- |".repeat(cpuNames.length)}`);
      for (const figure of figures) {
        const cells = cpuNames.map((n) => {
          const value = pick(figure).get(n) ?? Number.NaN;
          return Number.isNaN(value) ? "" : value.toFixed(digits);
        });
        console.log(`| ${figure.name} | ${cells.join(" | ")} |`);
      }
    };
    perProcess("CPU time per request (ms), by process", (f) => f.cpuPerRequest, 2);
    perProcess("Write system calls per request, by process", (f) => f.writesPerRequest, 1);
  }
  if (executorLine) console.log(`\n${executorLine}`);
  console.log(
    `\nLoad average after the loads: ${loadAverage()} (other work on the machine skews every figure).`,
  );
  console.log(`\nResident memory (MiB; the executor's before it was stopped for the starts):\n`);
  console.log(`| | ${names.join(" | ")} |\n| --- |${" --- |".repeat(names.length)}`);
  console.log(
    `| idle, after start-up | ${names.map((n) => (idle.get(n) ?? Number.NaN).toFixed(0)).join(" | ")} |`,
  );
  console.log(
    `| after the load | ${names.map((n) => (after.get(n) ?? Number.NaN).toFixed(0)).join(" | ")} |`,
  );

  // 4. Browser tests, last: it replaces the executor with one per level of browser contexts.
  enterBenchPart("the browser table");
  if (only === "browser" || (!profile && !only && !pathOnly))
    await browserTable({
      system,
      projectId,
      secret,
      levels: numbers(process.env.BENCH_BROWSER_CONTEXTS, [1, 2, 4]),
      tests: Number(process.env.BENCH_BROWSER_TESTS ?? 40),
    });
  enterBenchPart("the browser-projects table");
  if (only === "browser-projects" || (!profile && !only && !pathOnly))
    await browserProjectsTable({
      tests: Number(process.env.BENCH_PROJECTS_TESTS ?? 40),
      contexts: Number(process.env.BENCH_PROJECTS_CONTEXTS ?? 2),
    });
  // Playwright specs (issue 42): it replaces the executor with one per PLAYWRIGHT_SPECS mode.
  enterBenchPart("the specs table");
  if (only === "specs" || (!profile && !only && !pathOnly))
    await specsTable({
      system,
      projectId,
      secret,
      launcher,
      specs: Number(process.env.BENCH_SPECS ?? 20),
      concurrency: Number(process.env.BENCH_SPECS_CONCURRENCY ?? 1),
    });

  // 5. The cost of metrics, on systems of its own (the one above stopped: the cores are theirs).
  enterBenchPart("the metrics table");
  if (only === "metrics" || (!profile && !only && !pathOnly)) {
    await floor?.stop();
    await system?.stop();
    floor = undefined;
    system = undefined;
    await metricsTable({
      adminDatabaseUrl: process.env.DATABASE_URL ?? postgres?.url ?? "",
      connections,
      seconds,
      start: (metrics, databaseUrl) =>
        startSystem({
          databaseUrl,
          redisUrl,
          ports: "free",
          keepOutput: false,
          extraEnv: { RATE_LIMIT_PER_MINUTE: "1000000", NODE_ENV: "production" },
          ...(!metrics && {
            serviceEnv: Object.fromEntries(serviceNames.map((name) => [name, { METRICS_PORT: "0" }])),
          }),
          launch: (service) => ({ file: process.execPath, args: [launcher, service], cwd: repoRoot }),
        }),
    });
  }

  // 6. Automation, on a system of its own (it runs its own automation replicas).
  if (only === "automation" || (!profile && !only && !pathOnly)) {
    await floor?.stop();
    await system?.stop();
    floor = undefined;
    system = undefined;
    await automationTable({
      adminDatabaseUrl: process.env.DATABASE_URL ?? postgres?.url ?? "",
      launcher,
      latencyRuns: Number(process.env.BENCH_AUTOMATION_RUNS ?? 100),
      drainRuns: Number(process.env.BENCH_AUTOMATION_DRAIN ?? 500),
      scheduleProjects: 20,
      schedulesPerProject: 50,
      scheduleTicks: Number(process.env.BENCH_SCHEDULE_TICKS ?? 2),
      start: (databaseUrl) =>
        startSystem({
          databaseUrl,
          redisUrl,
          ports: "free",
          keepOutput: false,
          extraEnv: { RATE_LIMIT_PER_MINUTE: "1000000", NODE_ENV: "production" },
          launch: (service) => ({ file: process.execPath, args: [launcher, service], cwd: repoRoot }),
        }),
    });
  }
} finally {
  await floor?.stop();
  await system?.stop();
  memoryLimits?.close();
  await Promise.all(owned.map((server) => server.stop()));
}

if (profile) {
  for (const service of profiled) {
    const dir = join(profileDir, service);
    const files = existsSync(dir) ? readdirSync(dir).filter((file) => file.endsWith(".cpuprofile")) : [];
    for (const file of files) {
      console.log(`\n${service}: the 10 functions with the most self time (${join(dir, file)})\n`);
      console.log("| function | self ms | of the busy time |\n| --- | --- | --- |");
      for (const { name, ms, share } of topSelfTime(join(dir, file), 10, repoRoot))
        console.log(`| ${name} | ${ms.toFixed(0)} | ${(share * 100).toFixed(1)}% |`);
    }
  }
}
