// The abuse table of `make bench` (BENCH_ONLY=abuse runs it alone): N connections that hold a
// port the way a slow or idle client does, against the gateway's and the console's HTTP ports and
// one service's gRPC port, with each process's RSS and open descriptors while they are held, and
// the latency of a legitimate request made meanwhile. Printed, never asserted: docs/security.md
// ("Resource limits") quotes it.
import { readdirSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { rssMiB } from "./measure.js";

/** How an abusive client holds a connection: what it sends first, then nothing more. */
const kinds = {
  /** Complete headers announcing a 1 MB body, no credentials; the body never comes. */
  "slow body": (path: string) =>
    `POST ${path} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{`,
  /** Headers begun and never finished. */
  "slow headers": (path: string) => `GET ${path} HTTP/1.1\r\nHost: bench\r\nX-Slow: `,
  /** Connects and sends nothing. */
  idle: () => "",
} as const;

export interface AbuseTarget {
  name: string;
  /** host:port */
  host: string;
  port: number;
  pid: number | undefined;
  /** The path the abusive requests name (HTTP ports). */
  path: string;
  /** Which kinds apply (a gRPC port speaks no HTTP/1.1 headers: idle only). */
  kinds: (keyof typeof kinds)[];
  /** One legitimate request; resolves with its status. */
  legit(): Promise<number>;
}

const descriptors = (pid: number | undefined): number => {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return Number.NaN;
  }
};

/** Opens `count` connections, in batches (a burst of 15,000 SYNs overflows the listen backlog). */
async function hold(target: AbuseTarget, count: number, first: string): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let opened = 0; opened < count; ) {
    const batch = Math.min(500, count - opened);
    await Promise.all(
      Array.from(
        { length: batch },
        () =>
          new Promise<void>((resolve) => {
            const socket = connect(target.port, target.host);
            socket.on("error", () => resolve());
            socket.on("data", () => {});
            socket.once("connect", () => {
              if (first) socket.write(first);
              resolve();
            });
            socket.once("close", () => resolve());
            sockets.push(socket);
          }),
      ),
    );
    opened += batch;
  }
  return sockets;
}

/**
 * A legitimate request as a client makes it at a full server: a refused connection is retried
 * after 100 ms, then twice as long each time up to 1 s, for up to 15 s. The median of 5 such
 * requests, with how many attempts the slowest took.
 */
async function legitLatency(target: AbuseTarget): Promise<{ ms: number; status: string }> {
  const times: number[] = [];
  const statuses = new Set<string>();
  let mostAttempts = 0;
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    let attempts = 0;
    let delay = 100;
    let status = "";
    while (performance.now() - started < 15_000) {
      attempts++;
      const answer = await target.legit().then(
        (code) => String(code),
        () => undefined,
      );
      if (answer !== undefined) {
        status = answer;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 1_000);
    }
    statuses.add(status || "no answer in 15 s");
    mostAttempts = Math.max(mostAttempts, attempts);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { ms: times[2] ?? Number.NaN, status: `${[...statuses].join(",")}; attempts ≤ ${mostAttempts}` };
}

/** Prints the abuse table: one row per target, kind and count. */
export async function abuseTable(targets: AbuseTarget[], counts: number[]): Promise<void> {
  console.log("\n## Abuse: connections held by slow or idle clients\n");
  console.log(
    "| port | kind | N | still open after 2 s | RSS before MiB | RSS peak MiB | fds peak | legit request p50 ms (status; attempts) |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const target of targets) {
    for (const kind of target.kinds) {
      for (const count of counts) {
        const before = rssMiB(target.pid);
        let peak = before;
        let fds = descriptors(target.pid);
        const sample = setInterval(() => {
          peak = Math.max(peak, rssMiB(target.pid));
          fds = Math.max(fds, descriptors(target.pid));
        }, 100);
        const sockets = await hold(target, count, kinds[kind](target.path));
        const legit = await legitLatency(target);
        // Held a moment longer: what the server keeps is what is still open then.
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        const open = sockets.filter((s) => !s.destroyed && s.readyState === "open").length;
        clearInterval(sample);
        peak = Math.max(peak, rssMiB(target.pid));
        for (const socket of sockets) socket.destroy();
        console.log(
          `| ${target.name} | ${kind} | ${count} | ${open} | ${before.toFixed(0)} | ${peak.toFixed(0)} | ${fds} | ${legit.ms.toFixed(1)} (${legit.status}) |`,
        );
        // Let the server see the closes before the next row counts its connections.
        await new Promise((resolve) => setTimeout(resolve, 3_000));
      }
    }
  }
}
