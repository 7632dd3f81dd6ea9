// The growth table of `make bench` (scripts/bench.ts): what watching a run costs as runs and their
// watchers grow. Runs of each size in BENCH_GROWTH_SIZES (one-step GET tests on the demo target),
// each with each count of watchers in BENCH_GROWTH_WATCHERS, half of them `GET /v1/runs/:id?wait=30`
// long-polls through the gateway in a loop until the run finished (what `testrun run` does), half
// ConsoleService.WatchRun streams through the console's API (what a run page does), called again
// when the console's window ends one. For each: the wall time from the start's answer to the run's
// finish (seen in PostgreSQL by a cheap poll, not by a watcher), the CPU time per executed test of
// the runs service, the gateway, the console and the executor, and the bytes each kind of watcher
// received per test change (a test's claim and its completion are its two changes; long-polls:
// response bodies; streams: the messages' binary encoding, the Connect protocol's payload).
//
// Beside it, the executor's floor (bench/executor-floor.ts) executes a run of the largest size with
// the executor stopped: its tests per second are what the executor's are compared with.
import { toBinary } from "@bufbuild/protobuf";
import { createCliContext, createTestCases, readTestCaseFile } from "@testrun/cli";
import { WatchRunResponseSchema } from "@testrun/gen/testrun/console/v1/console_pb";
import { type ServiceProcess, startServiceProcess } from "@testrun/testing";
import pg from "pg";
import { consoleClient, signIn } from "../../test/console-client.js";
import type { System } from "../system.js";
import { cpuMs } from "./measure.js";

export interface GrowthOptions {
  system: System;
  databaseUrl: string;
  redisUrl: string;
  projectId: string;
  ownerMemberId: string;
  /** The key's secret, for the REST calls. */
  secret: string;
  sizes: number[];
  watchers: number[];
}

interface Row {
  tests: number;
  watchers: number;
  wallMs: number;
  cpuPerTest: Map<string, number>;
  pollBytesPerChange: number;
  streamBytesPerChange: number;
}

const measured = ["runs", "gateway", "console", "executor"];

const yamlOf = (count: number) =>
  Array.from(
    { length: count },
    (_, i) =>
      `- name: grow ${i}\n  tags: [grow]\n  steps:\n    - name: get health\n      http: { method: GET, path: /health }\n      expect: { status: 200 }\n`,
  ).join("");

/** Prints the growth table and the executor's floor; asserts nothing. */
export async function growthTable(options: GrowthOptions): Promise<void> {
  const { system, projectId, secret } = options;
  const gateway = system.gatewayUrl;
  const largest = Math.max(...options.sizes);
  const cases = await createTestCases(createCliContext(system.env), {
    projectId,
    testCases: readTestCaseFile(yamlOf(largest), "grow.yaml"),
  });
  const ids = cases.map((testCase) => testCase.id);
  const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
  const cookie = await signIn(system, options.ownerMemberId);
  const console_ = consoleClient(system, cookie);
  const db = new pg.Pool({ connectionString: options.databaseUrl, max: 1 });
  const pids = new Map(measured.map((name) => [name, system.processes.get(name)?.process.pid]));

  const start = async (tests: number): Promise<string> => {
    const res = await fetch(`${gateway}/v1/runs`, {
      method: "POST",
      headers,
      body: JSON.stringify({ testCaseIds: ids.slice(0, tests), name: `growth ${tests}` }),
    });
    const body = (await res.json()) as { id?: string };
    if (res.status !== 201 || !body.id)
      throw new Error(`POST /v1/runs: HTTP ${res.status}: ${JSON.stringify(body)}`);
    return body.id;
  };
  /** Resolves when PostgreSQL says the run finished: a poll that costs the services nothing. */
  const finished = async (runId: string): Promise<void> => {
    for (;;) {
      const { rows } = await db.query("select finished_at from runs.runs where id = $1", [runId]);
      if (rows[0]?.finished_at) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  /** A `testrun run`: long-polls until the run is finished; the bytes of the bodies received. */
  const longPoll = async (runId: string): Promise<number> => {
    let bytes = 0;
    for (;;) {
      const res = await fetch(`${gateway}/v1/runs/${runId}?wait=30`, { headers });
      const text = await res.text();
      bytes += Buffer.byteLength(text);
      if (res.status !== 200) throw new Error(`GET /v1/runs/${runId}?wait=30: HTTP ${res.status}: ${text}`);
      if ((JSON.parse(text) as { finished?: boolean }).finished) return bytes;
    }
  };
  /** A run page: WatchRun through the console until the run is finished; the bytes of its messages. */
  const stream = async (runId: string): Promise<number> => {
    let bytes = 0;
    let done = false;
    while (!done) {
      // As the run page asks: the whole run first, then only what changed.
      for await (const message of console_.watchRun({ projectId, runId, changes: true })) {
        bytes += toBinary(WatchRunResponseSchema, message).length;
        if (message.run?.run?.finished || message.change?.finished) done = true;
      }
    }
    return bytes;
  };

  const rows: Row[] = [];
  for (const tests of options.sizes) {
    for (const watchers of options.watchers) {
      const before = new Map(measured.map((name) => [name, cpuMs(pids.get(name))]));
      const runId = await start(tests);
      const began = performance.now();
      const polls = Array.from({ length: Math.ceil(watchers / 2) }, () => longPoll(runId));
      const streams = Array.from({ length: Math.floor(watchers / 2) }, () => stream(runId));
      await finished(runId);
      const wallMs = performance.now() - began;
      const [pollBytes, streamBytes] = await Promise.all([Promise.all(polls), Promise.all(streams)]);
      const changes = 2 * tests;
      const mean = (values: number[]) =>
        values.length === 0 ? Number.NaN : values.reduce((sum, v) => sum + v, 0) / values.length;
      rows.push({
        tests,
        watchers,
        wallMs,
        cpuPerTest: new Map(
          measured.map((name) => [name, (cpuMs(pids.get(name)) - (before.get(name) ?? 0)) / tests]),
        ),
        pollBytesPerChange: mean(pollBytes) / changes,
        streamBytesPerChange: mean(streamBytes) / changes,
      });
      const last = rows.at(-1) as Row;
      process.stderr.write(
        `growth: ${tests} tests, ${watchers} watchers: ${(last.wallMs / 1000).toFixed(1)} s\n`,
      );
    }
  }

  // The floor: the same largest run, executed by one process doing only what must be done.
  const executor = system.processes.get("executor");
  await executor?.stop();
  let floor: ServiceProcess | undefined;
  let floorMs = Number.NaN;
  try {
    floor = await startServiceProcess(
      "executor-floor",
      { DATABASE_URL: options.databaseUrl, REDIS_URL: options.redisUrl, CONCURRENCY: "4" },
      { keepOutput: true, entry: "scripts/bench/executor-floor.ts" },
    );
    const runId = await start(largest);
    const began = performance.now();
    const stalled = new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error(`the executor floor stalled:\n${floor?.output().join("\n")}`)),
        120_000,
      ).unref(),
    );
    await Promise.race([finished(runId), stalled]);
    floorMs = performance.now() - began;
  } catch (error) {
    console.error(String(error));
  } finally {
    await floor?.stop();
    await db.end();
  }

  const cell = (value: number, digits: number) => (Number.isNaN(value) ? "" : value.toFixed(digits));
  console.log(
    "\nGrowth: runs watched by half `?wait=30` long-polls (gateway), half WatchRun streams (console); " +
      "CPU ms per executed test; bytes a watcher received per test change (2 per test)\n",
  );
  console.log(
    "| tests | watchers | wall time | × unwatched | tests/s | runs | gateway | console | executor | runs × unwatched | long-poll B/change | stream B/change |",
  );
  console.log(`| --- |${" --- |".repeat(11)}`);
  for (const row of rows) {
    const unwatched = rows.find((r) => r.tests === row.tests && r.watchers === 0);
    const cpu = (name: string) => row.cpuPerTest.get(name) ?? Number.NaN;
    const runsRatio = unwatched ? cpu("runs") / (unwatched.cpuPerTest.get("runs") ?? Number.NaN) : Number.NaN;
    console.log(
      `| ${row.tests} | ${row.watchers} | ${(row.wallMs / 1000).toFixed(2)} s | ${cell(unwatched ? row.wallMs / unwatched.wallMs : Number.NaN, 2)} | ` +
        `${((row.tests / row.wallMs) * 1000).toFixed(0)} | ${measured.map((name) => cell(cpu(name), 2)).join(" | ")} | ` +
        `${cell(runsRatio, 2)} | ${cell(row.pollBytesPerChange, 0)} | ${cell(row.streamBytesPerChange, 0)} |`,
    );
  }
  const unwatchedLargest = rows.find((r) => r.tests === largest && r.watchers === 0);
  const floorRate = (largest / floorMs) * 1000;
  const executorRate = unwatchedLargest ? (largest / unwatchedLargest.wallMs) * 1000 : Number.NaN;
  console.log(
    `\nexecutor floor: ${largest} tests in ${(floorMs / 1000).toFixed(2)} s, ${floorRate.toFixed(0)} tests/s ` +
      `(CONCURRENCY 4); the executor unwatched: ${executorRate.toFixed(0)} tests/s, ` +
      `${((executorRate / floorRate) * 100).toFixed(0)}% of the floor's`,
  );
}
