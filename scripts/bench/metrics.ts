// `make bench`'s cost of measuring (BENCH_ONLY=metrics runs it alone): the read load (GET
// /v1/runs/:id of a finished 2-test run through the gateway) on a system with every component's
// /metrics on, then on one with METRICS_PORT=0, and the CPU time per request of the processes the
// read goes through; then, metrics on, how long a scrape of each component's /metrics takes while
// that load runs. Figures only, no assertion (docs/development.md, "Benchmarks").
import { createCliContext, grantCredits } from "@testrun/cli";
import { createTestDatabase } from "@testrun/testing";
import { seedDemo } from "../demo/seed.js";
import type { System } from "../system.js";
import { cpuMs, load } from "./measure.js";

export interface MetricsTableOptions {
  /** Starts a fresh system (its own database) with /metrics on or off. */
  start: (metrics: boolean, databaseUrl: string) => Promise<System>;
  adminDatabaseUrl: string;
  connections: number;
  seconds: number;
}

/** The processes a read goes through: the gateway, and the services it calls for it. */
const readPath = ["gateway", "keys", "catalog", "runs"];
/** Scrapes per component while the load runs. */
const scrapes = 20;

export async function metricsTable(options: MetricsTableOptions): Promise<void> {
  const rows: { label: string; rps: number; cpu: Map<string, number> }[] = [];
  let scrapeLines: string[] = [];
  // Twice each, alternating, so that a machine getting busier or quieter does not favour one side.
  for (const metrics of [true, false, true, false]) {
    const system = await options.start(metrics, await createTestDatabase(options.adminDatabaseUrl));
    try {
      const { projectId, secret } = await seedDemo(system.env, system.demoTargetUrl);
      await grantCredits(createCliContext(system.env), { projectId, amount: 1000, reason: "benchmark" });
      const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
      const started = await fetch(`${system.gatewayUrl}/v1/runs`, {
        method: "POST",
        headers,
        body: JSON.stringify({ testPlan: "smoke" }),
      });
      const { id } = (await started.json()) as { id: string };
      for (let finished = false; !finished; ) {
        const run = await fetch(`${system.gatewayUrl}/v1/runs/${id}?wait=30`, { headers });
        finished = ((await run.json()) as { finished: boolean }).finished;
      }
      const request = {
        url: `${system.gatewayUrl}/v1/runs/${id}`,
        headers,
        connections: options.connections,
      };
      await load({ ...request, seconds: 2 });
      const pids = new Map(readPath.map((name) => [name, system.processes.get(name)?.process.pid]));
      const before = new Map([...pids].map(([name, pid]) => [name, cpuMs(pid)]));
      const result = await load({ ...request, seconds: options.seconds });
      const requests = result.requestsPerSecond * options.seconds;
      rows.push({
        label: metrics ? "metrics on" : "metrics off (METRICS_PORT=0)",
        rps: result.requestsPerSecond,
        cpu: new Map(
          [...pids].map(([name, pid]) => [name, (cpuMs(pid) - (before.get(name) ?? 0)) / requests]),
        ),
      });
      if (metrics && scrapeLines.length === 0)
        scrapeLines = await scrapesUnderLoad(system, request, options.seconds);
    } finally {
      await system.stop();
    }
  }

  console.log(
    `\nThe cost of metrics: GET /v1/runs/:id through the gateway, ${options.connections} connections, ` +
      `${options.seconds} s, each side twice (alternating); CPU time per request (ms):\n`,
  );
  console.log(
    `| | requests/s | ${readPath.join(" | ")} | together |\n| --- | --- |${" --- |".repeat(readPath.length + 1)}`,
  );
  const mean = (label: string) => {
    const of = rows.filter((row) => row.label === label);
    const cpu = readPath.map(
      (name) => of.reduce((sum, row) => sum + (row.cpu.get(name) ?? 0), 0) / of.length,
    );
    return { rps: of.reduce((sum, row) => sum + row.rps, 0) / of.length, cpu };
  };
  const sides = ["metrics on", "metrics off (METRICS_PORT=0)"].map((label) => ({ label, ...mean(label) }));
  for (const side of sides) {
    const together = side.cpu.reduce((a, b) => a + b, 0);
    console.log(
      `| ${side.label} | ${side.rps.toFixed(0)} | ${side.cpu.map((ms) => ms.toFixed(3)).join(" | ")} | ${together.toFixed(3)} |`,
    );
  }
  const [on, off] = sides.map((side) => side.cpu.reduce((a, b) => a + b, 0));
  if (on !== undefined && off !== undefined)
    console.log(`\nmetrics on costs ${(((on - off) / off) * 100).toFixed(1)}% CPU per request (together)`);
  console.log(`\nA scrape of /metrics while the load runs (${scrapes} per component):\n`);
  console.log("| component | median ms | max ms | bytes |\n| --- | --- | --- | --- |");
  for (const line of scrapeLines) console.log(line);
}

/** Times `scrapes` GET /metrics of each component, one after another, while the read load runs. */
async function scrapesUnderLoad(
  system: System,
  request: { url: string; headers: Record<string, string>; connections: number },
  seconds: number,
): Promise<string[]> {
  const loading = load({ ...request, seconds });
  // Into the load before the first scrape.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const lines: string[] = [];
  for (const [name, url] of system.metricsUrls) {
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < scrapes; i++) {
      const began = performance.now();
      const response = await fetch(url);
      bytes = (await response.text()).length;
      times.push(performance.now() - began);
    }
    times.sort((a, b) => a - b);
    lines.push(
      `| ${name} | ${(times[Math.floor(times.length / 2)] ?? 0).toFixed(1)} | ${(times.at(-1) ?? 0).toFixed(1)} | ${bytes} |`,
    );
  }
  await loading;
  return lines;
}
