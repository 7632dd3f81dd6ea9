// `make bench`: figures for the run path, measured on this machine against the whole system (every
// service its own process, throwaway PostgreSQL and Redis unless DATABASE_URL / REDIS_URL are set).
// It prints figures and asserts none: timings on shared machines vary too much to fail a build on.
import { readFileSync } from "node:fs";
import { createCliContext, createTestCases, grantCredits, parseTestCaseFile } from "@testrun/cli";
import {
  createTestDatabase,
  startThrowawayPostgres,
  startThrowawayRedis,
  type ThrowawayServer,
} from "@testrun/kit/testing";
import { seedDemo } from "./demo/seed.js";
import { type System, startSystem } from "./system.js";

const sequentialStarts = 100;
const concurrentStarts = 50;
const bigRunTests = 200;
const reads = 100;

const owned: ThrowawayServer[] = [];
let system: System | undefined;

/** Milliseconds at the given quantile of sorted samples. */
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
const summary = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return `p50 ${quantile(sorted, 0.5).toFixed(1)} ms, p95 ${quantile(sorted, 0.95).toFixed(1)} ms, p99 ${quantile(sorted, 0.99).toFixed(1)} ms`;
};

/** Resident memory of a process, from /proc (Linux). */
const rssMiB = (pid: number | undefined) => {
  const status = pid ? readFileSync(`/proc/${pid}/status`, "utf8") : "";
  const kib = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN);
  return (kib / 1024).toFixed(0);
};

try {
  const postgres = process.env.DATABASE_URL ? undefined : await startThrowawayPostgres();
  const redis = process.env.REDIS_URL ? undefined : await startThrowawayRedis();
  owned.push(...[postgres, redis].filter((s): s is ThrowawayServer => s !== undefined));
  system = await startSystem({
    databaseUrl: await createTestDatabase(process.env.DATABASE_URL ?? postgres?.url ?? ""),
    redisUrl: process.env.REDIS_URL ?? redis?.url ?? "",
    ports: "free",
    // The figures are the system's, not the per-key rate limit's.
    extraEnv: { RATE_LIMIT_PER_MINUTE: "1000000" },
  });
  const gateway = system.gatewayUrl;
  const { projectId, secret } = await seedDemo(system.env, system.demoTargetUrl);
  const ctx = createCliContext(system.env);
  await grantCredits(ctx, { projectId, amount: 100_000, reason: "benchmark" });
  const yaml = Array.from(
    { length: bigRunTests },
    (_, i) =>
      `- name: bench ${i}\n  tags: [bench]\n  steps:\n    - name: get health\n      http: { method: GET, path: /health }\n      expect: { status: 200 }\n`,
  ).join("");
  const [one] = await createTestCases(ctx, { projectId, testCases: parseTestCaseFile(yaml, "bench.yaml") });
  const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json" };

  const timed = async (work: () => Promise<Response>) => {
    const began = performance.now();
    const res = await work();
    const body = (await res.json()) as { id?: string; finished?: boolean };
    if (res.status >= 300) throw new Error(`HTTP ${res.status}: ${JSON.stringify(body)}`);
    return { ms: performance.now() - began, body };
  };
  const start = (selection: object) =>
    timed(() => fetch(`${gateway}/v1/runs`, { method: "POST", headers, body: JSON.stringify(selection) }));
  const read = (id: string) => timed(() => fetch(`${gateway}/v1/runs/${id}`, { headers }));

  console.log(`Testrun benchmark (${new Date().toISOString()}, Node ${process.versions.node})\n`);

  const startSamples: number[] = [];
  for (let i = 0; i < sequentialStarts; i++) startSamples.push((await start({ testCaseIds: [one?.id] })).ms);
  console.log(`POST /v1/runs, 1 test, ${sequentialStarts} one after another: ${summary(startSamples)}`);

  const burstBegan = performance.now();
  await Promise.all(Array.from({ length: concurrentStarts }, () => start({ testCaseIds: [one?.id] })));
  const burstMs = performance.now() - burstBegan;
  console.log(
    `POST /v1/runs, ${concurrentStarts} at once: ${burstMs.toFixed(0)} ms in all, ${((concurrentStarts / burstMs) * 1000).toFixed(0)} starts/s`,
  );

  const big = await start({ tags: ["bench"] });
  const bigStartMs = big.ms;
  const id = String(big.body.id);
  const runBegan = performance.now();
  for (;;) {
    const { body } = await read(id);
    if (body.finished) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const runMs = performance.now() - runBegan;
  console.log(
    `POST /v1/runs, ${bigRunTests} tests: ${bigStartMs.toFixed(1)} ms; executed in ${runMs.toFixed(0)} ms (${((bigRunTests / runMs) * 1000).toFixed(0)} tests/s, one executor, CONCURRENCY 4)`,
  );

  const readSamples: number[] = [];
  for (let i = 0; i < reads; i++) readSamples.push((await read(id)).ms);
  console.log(`GET /v1/runs/:id, ${bigRunTests} tests, ${reads} one after another: ${summary(readSamples)}`);

  console.log("\nResident memory after the load (MiB; services run from source through tsx):");
  for (const [name, child] of system.processes)
    console.log(`  ${name.padEnd(12)} ${rssMiB(child.process.pid)}`);
} finally {
  await system?.stop();
  await Promise.all(owned.map((server) => server.stop()));
}
