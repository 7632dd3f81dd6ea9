// The instruments of `make bench` (scripts/bench.ts): HTTP load with autocannon in a process of its
// own (so that the load generator and the benchmark's own work do not share an event loop), the
// CPU time and resident memory of a process from /proc (Linux), and the functions a V8 CPU profile
// spent most of its own time in.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";

const autocannon = createRequire(import.meta.url).resolve("autocannon");

export interface LoadOptions {
  url: string;
  method?: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
}

export interface LoadResult {
  /** Responses with a 2xx status a second, over the whole run. */
  requestsPerSecond: number;
  p50: number;
  p99: number;
  /** Responses of another status, and requests that got none (errors, timeouts). */
  failed: number;
}

/** Runs autocannon against one URL at `connections` concurrent connections for `seconds`. */
export async function load(options: LoadOptions): Promise<LoadResult> {
  const args = [
    autocannon,
    "--json",
    "--connections",
    String(options.connections),
    "--duration",
    String(options.seconds),
    "--method",
    options.method ?? "GET",
    ...Object.entries(options.headers).flatMap(([name, value]) => ["--headers", `${name}=${value}`]),
    ...(options.body === undefined ? [] : ["--body", options.body]),
    options.url,
  ];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const [code] = await once(child, "close");
  if (code !== 0) throw new Error(`autocannon exited ${code}: ${stderr}`);
  const result = JSON.parse(stdout) as {
    duration: number;
    latency: { p50: number; p99: number };
    "2xx": number;
    non2xx: number;
    errors: number;
    timeouts: number;
  };
  return {
    requestsPerSecond: result["2xx"] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failed: result.non2xx + result.errors + result.timeouts,
  };
}

/** The CPU time (user and system) a process has used so far, in ms; NaN once it is gone. */
export function cpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces): state is the first, utime the 12th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // USER_HZ is 100 on Linux: a tick is 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/**
 * The write-like system calls (write, writev, sendto...) a process has made so far; NaN once it is
 * gone. On loopback each one also runs the receiver's side of the network stack, so on this
 * machine their count decides much of a request's CPU time (docs/development.md, "Benchmarks").
 */
export function writeCalls(pid: number | undefined): number {
  try {
    return Number(/syscw:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, "utf8"))?.[1] ?? Number.NaN);
  } catch {
    return Number.NaN;
  }
}

/** Resident memory of a process in MiB; NaN once it is gone. */
export function rssMiB(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024;
  } catch {
    return Number.NaN;
  }
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * The functions a .cpuprofile (node --cpu-prof) spent the most self time in, by name and place,
 * with their share of the time the process was not idle.
 */
export function topSelfTime(
  file: string,
  count: number,
  root: string,
): { name: string; ms: number; share: number }[] {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const nameOf = new Map(
    profile.nodes.map((node) => {
      const { functionName, url, lineNumber } = node.callFrame;
      const where = url ? ` ${url.replace("file://", "").replace(root, "")}:${lineNumber + 1}` : "";
      return [node.id, `${functionName || "(anonymous)"}${where}`];
    }),
  );
  const self = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const name = nameOf.get(id) ?? "?";
    self.set(name, (self.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  const busy = [...self].filter(([name]) => name !== "(idle)").reduce((sum, [, ms]) => sum + ms, 0);
  return [...self]
    .filter(([name]) => name !== "(idle)")
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, ms]) => ({ name, ms, share: ms / busy }));
}

/**
 * Resident memory of a process and all its descendants, in MiB (Linux /proc): an executor with its
 * Chromium or its spec runners. Every thread's children are walked, not only the main thread's:
 * Chromium starts its renderers from another thread than its main one. Pages shared between the
 * processes count once per process, so the sum is an upper bound.
 */
export function treeRssMiB(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  let pages = 0;
  const seen = new Set<number>();
  const visit = (id: number) => {
    if (seen.has(id)) return;
    seen.add(id);
    try {
      pages += Number(readFileSync(`/proc/${id}/statm`, "utf8").split(" ")[1]);
      for (const task of readdirSync(`/proc/${id}/task`))
        for (const child of readFileSync(`/proc/${id}/task/${task}/children`, "utf8").trim().split(" "))
          if (child) visit(Number(child));
    } catch {
      // Gone meanwhile: a renderer of a closed context, a spec runner that ended.
    }
  };
  visit(pid);
  return (pages * 4096) / 2 ** 20;
}

/** What the benches read of a finished run over REST. */
export interface FinishedRunBody {
  id?: string;
  finished?: boolean;
  passedTests?: number;
  tests?: { status?: string; summary?: string }[];
}

/**
 * Starts a run of `ids` through the gateway with the project key `secret` and follows it with
 * `?wait=` to its end: the finished run, or an error naming the call that failed.
 */
export function gatewayRunner(gatewayUrl: string, secret: string) {
  const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
  const call = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${gatewayUrl}${path}`, { headers, ...init });
    const body = (await res.json()) as FinishedRunBody;
    if (res.status >= 300) throw new Error(`${path}: HTTP ${res.status}: ${JSON.stringify(body)}`);
    return body;
  };
  return async (ids: string[]): Promise<FinishedRunBody> => {
    const { id } = await call("/v1/runs", { method: "POST", body: JSON.stringify({ testCaseIds: ids }) });
    let run = await call(`/v1/runs/${id}`);
    while (!run.finished) run = await call(`/v1/runs/${id}?wait=30`);
    return run;
  };
}
