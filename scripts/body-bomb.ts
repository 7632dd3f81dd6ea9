// Body bombs against the running system (docs/security.md, "Resource limits"): a gzip body of
// zeros (~1000:1) posted to the console's API (without a cookie, with a made-up one, to the method
// that needs none) and to the runs service's port (without a token, with the service token, to the
// public health check). Prints, per target and body, the answer, how long it took and the
// process's RSS before, at its peak and a second after. A benchmark: it prints figures and asserts
// nothing.
//
//   node --conditions=source --import tsx scripts/body-bomb.ts
import http2 from "node:http2";
import { gzipBomb, startThrowawayPostgres, startThrowawayRedis } from "@testrun/testing";
import { rssMiB } from "./bench/measure.js";
import { startSystem } from "./system.js";

interface Outcome {
  status: string;
  ms: number;
}

/** POSTs a gzip body to the console's HTTP/1.1 API, as a browser would. */
async function postConsole(url: string, path: string, body: Buffer, headers: Record<string, string>) {
  const started = performance.now();
  const res = await fetch(`${url}/api/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "content-encoding": "gzip", ...headers },
    body,
  });
  const text = await res.text();
  return { status: `${res.status} ${text.slice(0, 100)}`, ms: Math.round(performance.now() - started) };
}

/** POSTs a gzip body in a Connect unary call to a service's h2c port. */
function postService(
  url: string,
  path: string,
  body: Buffer,
  headers: Record<string, string>,
): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const session = http2.connect(url);
    const done = (status: string) => {
      session.close();
      resolve({ status, ms: Math.round(performance.now() - started) });
    };
    session.on("error", (error) => done(`session error ${error.message}`));
    const stream = session.request({
      ":method": "POST",
      ":path": `/${path}`,
      "content-type": "application/proto",
      "content-encoding": "gzip",
      ...headers,
    });
    let status = 0;
    const chunks: Buffer[] = [];
    stream.on("response", (headers) => {
      status = Number(headers[":status"]);
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => done(`${status} ${Buffer.concat(chunks).toString("utf8").slice(0, 100)}`));
    stream.on("error", (error) => done(`stream error ${error.message}`));
    stream.end(body);
  });
}

/** Runs `action` while sampling `pid`'s RSS every 20 ms; the peak and what is left a second later. */
async function measured(pid: number | undefined, action: () => Promise<Outcome>) {
  const before = rssMiB(pid);
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMiB(pid));
  }, 20);
  const outcome = await action();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  clearInterval(sampler);
  const after = rssMiB(pid);
  peak = Math.max(peak, after);
  return { ...outcome, before, peak, after };
}

const postgres = await startThrowawayPostgres();
const redis = await startThrowawayRedis();
const system = await startSystem({
  databaseUrl: postgres.url,
  redisUrl: redis.url,
  ports: "free",
  keepOutput: false,
});
try {
  const consolePid = system.processes.get("console")?.process.pid;
  const runsPid = system.processes.get("runs")?.process.pid;
  const runsUrl = system.env.RUNS_URL ?? "";
  const getSession = "testrun.console.v1.ConsoleService/GetSession";
  const getRun = "testrun.runs.v1.RunsService/GetRun";
  const targets: {
    name: string;
    pid: number | undefined;
    post: typeof postConsole;
    url: string;
    path: string;
    headers: Record<string, string>;
  }[] = [
    {
      name: "console, no cookie",
      pid: consolePid,
      post: postConsole,
      url: system.consoleUrl,
      path: getSession,
      headers: {},
    },
    {
      name: "console, made-up cookie",
      pid: consolePid,
      post: postConsole,
      url: system.consoleUrl,
      path: getSession,
      headers: { cookie: "testrun_session=made-up" },
    },
    {
      name: "console, GetSignInOptions",
      pid: consolePid,
      post: postConsole,
      url: system.consoleUrl,
      path: "testrun.console.v1.ConsoleService/GetSignInOptions",
      headers: {},
    },
    { name: "runs, no token", pid: runsPid, post: postService, url: runsUrl, path: getRun, headers: {} },
    {
      name: "runs, service token",
      pid: runsPid,
      post: postService,
      url: runsUrl,
      path: getRun,
      headers: { authorization: `Bearer ${system.env.SERVICE_TOKEN}` },
    },
    {
      name: "runs, health check",
      pid: runsPid,
      post: postService,
      url: runsUrl,
      path: "grpc.health.v1.Health/Check",
      headers: {},
    },
  ];
  const mib = (n: number) => `${n.toFixed(0)} MiB`;
  for (const { name, pid, post, url, path, headers } of targets) {
    for (const inflatedMiB of [300, 1000]) {
      const body = gzipBomb(inflatedMiB);
      const r = await measured(pid, () =>
        post(url, path, body, { "connect-protocol-version": "1", ...headers }),
      );
      console.log(
        `${name}: ${(body.length / 1024).toFixed(0)} KiB gzip (${inflatedMiB} MiB inflated): ` +
          `RSS ${mib(r.before)} -> peak ${mib(r.peak)} (+${mib(r.peak - r.before)}), ${mib(r.after)} 1 s later; ` +
          `answered in ${r.ms} ms: ${r.status.replaceAll("\n", " ")}`,
      );
    }
  }
} finally {
  await system.stop();
  await postgres.stop();
  await redis.stop();
}
