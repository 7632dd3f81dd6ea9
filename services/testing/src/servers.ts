/**
 * Throwaway PostgreSQL and Redis servers for tests, started from the machine's own binaries
 * (Debian packages). Each server lives in its own temp directory, listens on 127.0.0.1 on a free
 * port and is stopped by its own pid, never by process name.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { chown, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

const PG_BIN = process.env.TESTRUN_PG_BIN ?? "/usr/lib/postgresql/15/bin";
const REDIS_SERVER = process.env.TESTRUN_REDIS_SERVER ?? "/usr/bin/redis-server";

export interface ThrowawayServer {
  url: string;
  stop(): Promise<void>;
  /**
   * Freezes the server (SIGSTOP to its processes): connections stay open but nothing is answered,
   * as when a server or the network path to it hangs. resume() (and stop()) thaw it.
   */
  pause(): Promise<void>;
  resume(): Promise<void>;
}

/**
 * A TCP port that was free on 127.0.0.1 a moment ago, for a server started next that other
 * processes must be told about before it listens. Chosen at random below Linux's ephemeral range
 * (ip_local_port_range, 32768–60999 by default), not with port 0: port 0 hands out ephemeral ports,
 * the ones every outgoing connection of the tests and services takes its local port from, so a port
 * found that way could be taken by a PostgreSQL or Redis connection before its server bound it.
 *
 * A port is free only until its server binds it, and a whole system asks for some 25 before any of
 * them listens: a port handed out once is not handed out again by this process (else two services
 * of one system could be given the same one), and each mocha worker (MOCHA_WORKER_ID, when tests
 * run in parallel) draws from its own slice of the range, so two workers never race for a port.
 */
export async function findFreePort(): Promise<number> {
  const { from, to } = portSlice();
  if (handedOut.size > (to - from) / 2) handedOut.clear(); // long since bound or given up
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = from + Math.floor(Math.random() * (to - from));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await isFree(port)) return port;
  }
  throw new Error(`could not find a free port in ${from}-${to - 1}`);
}

const handedOut = new Set<number>();
/** How many slices the range is cut into: more than the jobs a two-core machine runs. */
const portSlices = 4;

/** This process's part of the range below the ephemeral ports: all of it, or its worker's slice. */
function portSlice(): { from: number; to: number } {
  const below = Math.min(ephemeralPortsStart(), 32_768);
  const from = Math.max(1_024, below - 12_000);
  const worker = Number(process.env.MOCHA_WORKER_ID);
  if (!Number.isInteger(worker) || worker < 0) return { from, to: below };
  const size = Math.floor((below - from) / portSlices);
  const start = from + (worker % portSlices) * size;
  return { from: start, to: start + size };
}

/** The first ephemeral port of this machine (Linux), or 32768 where it cannot be read. */
function ephemeralPortsStart(): number {
  try {
    const first = Number(
      readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0],
    );
    return Number.isInteger(first) && first > 2_048 ? first : 32_768;
  } catch {
    return 32_768;
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** Runs a tool; a failure carries the command line, exit status, stdout and stderr. */
function run(file: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd, encoding: "utf8" }, (error, stdout, stderr) => {
      if (!error) return resolve(stdout);
      const status = error.code ?? error.signal;
      const output = [stderr.trim(), stdout.trim()].filter(Boolean).join("\n");
      reject(new Error(`${[file, ...args].join(" ")} failed (${status}):\n${output}`, { cause: error }));
    });
  });
}

async function readLog(path: string): Promise<string> {
  const text = await readFile(path, "utf8").catch(() => "");
  return text.split("\n").slice(-30).join("\n").trim();
}

/** Appends the tail of a server log to an error so the failure explains itself. */
async function withLog(error: unknown, logPath: string): Promise<Error> {
  const log = await readLog(logPath);
  const message = error instanceof Error ? error.message : String(error);
  return new Error(log ? `${message}\n--- ${logPath} ---\n${log}` : message, { cause: error });
}

async function readPid(path: string): Promise<number | undefined> {
  const text = await readFile(path, "utf8").catch(() => "");
  const pid = Number.parseInt(text.split("\n")[0] ?? "", 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** Whether a process still runs. A zombie (exited, not yet reaped by its parent) counts as gone. */
async function isRunning(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  // Field 3, after the parenthesised command name, is the state.
  const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  return state !== "Z" && state !== "X";
}

/** A process and all its descendants (a postmaster and its backends), the process first. */
async function processTree(pid: number): Promise<number[]> {
  const children = new Map<number, number[]>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // Field 4, after the parenthesised command name and the state, is the parent's pid.
    const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const tree: number[] = [];
  for (let next = [pid]; next.length > 0; next = next.flatMap((p) => children.get(p) ?? []))
    tree.push(...next);
  return tree;
}

/**
 * Sends SIGSTOP or SIGCONT to a process and then to its descendants: a postmaster stopped first
 * forks no backend the walk would miss. A process gone meanwhile is skipped.
 */
async function signalTree(pid: number | undefined, signal: "SIGSTOP" | "SIGCONT"): Promise<void> {
  if (!pid) throw new Error("the server has no pid: it is not running");
  const send = (target: number) => {
    try {
      process.kill(target, signal);
    } catch {}
  };
  send(pid);
  for (const descendant of (await processTree(pid)).slice(1)) send(descendant);
}

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends a signal to a pid and waits (bounded) until that process has exited; SIGKILL if it lingers. */
async function killAndWait(pid: number, signal: NodeJS.Signals, timeoutMs = 5_000): Promise<void> {
  try {
    process.kill(pid, signal);
  } catch {
    return; // already gone
  }
  const deadline = Date.now() + timeoutMs;
  while (await isRunning(pid)) {
    if (Date.now() > deadline) {
      process.kill(pid, "SIGKILL");
      return killAndWait(pid, "SIGKILL", timeoutMs);
    }
    await tick(10);
  }
}

// Pids of servers still running, killed if the test process exits without stopping them.
const running = new Map<string, number>();
let exitHookInstalled = false;
function track(dir: string, pid: number): void {
  running.set(dir, pid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const [dir, pid] of running) {
      try {
        process.kill(pid, "SIGQUIT"); // postgres: immediate shutdown; redis: exits at once
      } catch {}
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const passwd = await readFile("/etc/passwd", "utf8");
  const fields = passwd
    .split("\n")
    .find((line) => line.startsWith("postgres:"))
    ?.split(":");
  if (!fields) throw new Error("no postgres user in /etc/passwd (is the postgresql package installed?)");
  return { uid: Number(fields[2]), gid: Number(fields[3]) };
}

/**
 * A fresh PostgreSQL cluster in a temp dir (trust auth, no durability) with an empty database
 * `testrun`. stop() shuts it down immediately and removes the dir.
 */
export async function startThrowawayPostgres(): Promise<ThrowawayServer> {
  const dir = await mkdtemp(join(tmpdir(), "testrun-pg-"));
  const data = join(dir, "data");
  const log = join(dir, "postgres.log");
  // initdb and pg_ctl refuse to run as root. cwd is the temp dir so the postgres user can enter it.
  const asPostgres = (tool: string, args: string[]) =>
    run("runuser", ["-u", "postgres", "--", join(PG_BIN, tool), ...args], dir);

  let started = false;
  const postmaster = () => readPid(join(data, "postmaster.pid"));
  const resume = async () => signalTree(await postmaster(), "SIGCONT");
  const stop = async () => {
    running.delete(dir);
    try {
      if (!started) return;
      started = false;
      const pid = await postmaster();
      if (pid) await signalTree(pid, "SIGCONT");
      await asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(async (error) => {
        if (!pid) throw error;
        await killAndWait(pid, "SIGQUIT");
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };

  try {
    const { uid, gid } = await postgresUser();
    await chown(dir, uid, gid);
    await asPostgres("initdb", [
      "-D",
      data,
      "-A",
      "trust",
      "-U",
      "postgres",
      "--no-sync",
      "-E",
      "UTF8",
      "--locale=C",
    ]);
    const port = await findFreePort();
    const options = [
      `-p ${port}`,
      `-k ${dir}`,
      "-c listen_addresses=127.0.0.1",
      "-c fsync=off",
      "-c synchronous_commit=off",
      "-c full_page_writes=off",
      "-c max_connections=300",
    ].join(" ");
    started = true;
    // -l matters: without a log file the postmaster inherits pg_ctl's stdout/stderr pipes, and
    // execFile would only report pg_ctl finished once the server itself exits.
    await asPostgres("pg_ctl", ["-D", data, "-l", log, "-w", "-t", "30", "-o", options, "start"]).catch(
      async (error) => {
        throw await withLog(error, log);
      },
    );
    const pid = await readPid(join(data, "postmaster.pid"));
    if (pid) track(dir, pid);
    const url = await createTestDatabase(`postgres://postgres@127.0.0.1:${port}/postgres`, "testrun");
    const pause = async () => signalTree(await postmaster(), "SIGSTOP");
    return { url, stop, pause, resume };
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
}

/**
 * Creates a database (default: a unique `t_<random>`) on the server of `baseUrl` and returns its
 * URL, so every suite can have an isolated database on one shared server. With `template`, the
 * database starts as a copy of that one (services/testing/src/migrated.ts).
 */
export async function createTestDatabase(baseUrl: string, name?: string, template?: string): Promise<string> {
  const database = name ?? `t_${randomBytes(6).toString("hex")}`;
  for (const identifier of [database, template ?? "t"])
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(identifier)) throw new Error(`unsafe database name: ${identifier}`);
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${database}"${template ? ` TEMPLATE "${template}"` : ""}`);
  } finally {
    await client.end();
  }
  const url = new URL(baseUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Whether a Redis server on the port answers PING with +PONG. */
function pingRedis(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    let reply = "";
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.on("error", () => done(false));
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk) => {
      reply += chunk.toString("latin1");
      if (reply.includes("\r\n")) done(reply.startsWith("+PONG"));
    });
    socket.on("close", () => done(false));
  });
}

/**
 * A Redis server in a temp dir with persistence off. stop() kills it by the pid in its pidfile,
 * waits for it to exit and removes the dir.
 */
export async function startThrowawayRedis(): Promise<ThrowawayServer> {
  const dir = await mkdtemp(join(tmpdir(), "testrun-redis-"));
  const pidfile = join(dir, "redis.pid");
  const log = join(dir, "redis.log");
  let pid: number | undefined;

  const stop = async () => {
    running.delete(dir);
    try {
      pid ??= await readPid(pidfile);
      if (pid) await signalTree(pid, "SIGCONT");
      if (pid) await killAndWait(pid, "SIGTERM");
      pid = undefined;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };

  try {
    const port = await findFreePort();
    // The daemonized child redirects its stdio to /dev/null, so execFile returns once it forked.
    await run(
      REDIS_SERVER,
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "yes",
        "--pidfile",
        pidfile,
        "--logfile",
        log,
        "--dir",
        dir,
      ],
      dir,
    );
    // Readiness: the forking parent exits before the server listens. Poll for PONG, bounded.
    const deadline = Date.now() + 10_000;
    while (!(await pingRedis(port))) {
      if (Date.now() > deadline)
        throw await withLog(new Error(`redis-server on port ${port} never answered PING`), log);
      await tick(20);
    }
    pid = await readPid(pidfile);
    if (!pid) throw await withLog(new Error(`redis-server wrote no pid to ${pidfile}`), log);
    track(dir, pid);
    return {
      url: `redis://127.0.0.1:${port}`,
      stop,
      pause: () => signalTree(pid, "SIGSTOP"),
      resume: () => signalTree(pid, "SIGCONT"),
    };
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
}
