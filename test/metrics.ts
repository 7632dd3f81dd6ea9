// Prometheus for the tests: the metric names a running system exports (what the dashboard's and
// the alerts' queries are checked against), and a real Prometheus server scraping it.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually, findFreePort, scrapeMetrics } from "@testrun/testing";
import type { System } from "../scripts/system.js";
import { seriesNames } from "./monitoring-queries.js";

/** Every metric name the system's components export now (histograms as their _bucket/_sum/_count). */
export async function exportedMetricNames(system: Pick<System, "metricsUrls">): Promise<Set<string>> {
  const names = new Set<string>();
  for (const url of system.metricsUrls.values())
    for (const sample of await scrapeMetrics(url)) names.add(sample.name);
  return names;
}

/**
 * Every series name the system's components declare now (`# TYPE` lines, histograms as their
 * _bucket/_sum/_count): a labelled counter nothing has counted yet has no sample but is declared.
 */
export async function declaredMetricSeries(system: Pick<System, "metricsUrls">): Promise<Set<string>> {
  const names = new Set<string>();
  for (const url of system.metricsUrls.values()) {
    const text = await (await fetch(url)).text();
    for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm))
      for (const series of seriesNames(String(name), String(type))) names.add(series);
  }
  return names;
}

export const prometheusBinary = process.env.TESTRUN_PROMETHEUS ?? "/usr/bin/prometheus";

/**
 * `promtool check metrics` (Debian's prometheus package) over an exposition: its exit code and
 * what it printed (each lint problem a line; nothing when the exposition passes).
 */
export async function promtoolCheckMetrics(
  exposition: string,
): Promise<{ code: number | null; output: string }> {
  const child = spawn("promtool", ["check", "metrics"], { stdio: ["pipe", "pipe", "pipe"] });
  const output: string[] = [];
  child.stdout.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "ENOENT"
          ? new Error("promtool is missing: run scripts/install-prerequisites.sh (Debian's prometheus)")
          : error,
      ),
    );
    child.once("close", resolve);
  });
  child.stdin.end(exposition);
  return { code: await exited, output: output.join("") };
}

/** A vector result of Prometheus' HTTP API: each series' labels and value. */
export interface PromSeries {
  metric: Record<string, string>;
  value: number;
}

export interface ThrowawayPrometheus {
  url: string;
  /** An instant query; the result's series (an empty list when none matches). */
  query(expression: string): Promise<PromSeries[]>;
  /** Polls `expression` until `accept` takes its result, or fails at the deadline saying what it saw last. */
  until(expression: string, accept: (series: PromSeries[]) => boolean, what: string): Promise<PromSeries[]>;
  stop(): Promise<void>;
}

/**
 * A Prometheus of its own (Debian's package) on a free port, with a throwaway configuration and
 * data directory, scraping every component of `system` each `intervalSeconds` as the job
 * `testrun` (the label `component` comes from the services themselves). Stopped by its pid.
 */
export async function startPrometheus(
  system: Pick<System, "metricsUrls">,
  intervalSeconds = 1,
): Promise<ThrowawayPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), "testrun-prometheus-"));
  const targets = [...system.metricsUrls.values()].map((url) => new URL(url).host);
  const config = [
    "global:",
    `  scrape_interval: ${intervalSeconds}s`,
    `  scrape_timeout: ${intervalSeconds}s`,
    "scrape_configs:",
    "  - job_name: testrun",
    "    static_configs:",
    `      - targets: ${JSON.stringify(targets)}`,
    "",
  ].join("\n");
  await writeFile(join(dir, "prometheus.yml"), config);
  const port = await findFreePort();
  const url = `http://127.0.0.1:${port}`;
  const output: string[] = [];
  const child: ChildProcess = spawn(
    prometheusBinary,
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, "SIGTERM");
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await eventually(
      async () => {
        if (child.exitCode !== null)
          throw new Error(`prometheus exited (${child.exitCode}):\n${output.join("")}`);
        return (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok ? true : undefined;
      },
      "prometheus to be ready",
      30_000,
    );
  } catch (error) {
    await stop();
    throw error;
  }

  const query = async (expression: string): Promise<PromSeries[]> => {
    const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expression)}`);
    const body = (await response.json()) as {
      status: string;
      error?: string;
      data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
    };
    if (body.status !== "success") throw new Error(`query ${expression}: ${body.error}`);
    return (body.data?.result ?? []).map((series) => ({
      metric: series.metric,
      value: Number(series.value[1]),
    }));
  };
  return {
    url,
    query,
    async until(expression, accept, what) {
      let last: PromSeries[] = [];
      try {
        return await eventually(
          async () => {
            last = await query(expression);
            return accept(last) ? last : undefined;
          },
          what,
          30_000,
        );
      } catch (error) {
        throw new Error(`${(error as Error).message}; ${expression} was ${JSON.stringify(last)}`);
      }
    },
    stop,
  };
}
