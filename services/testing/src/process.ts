import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { homedir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** Repository root, from which service entry points are found. */
export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));

/**
 * A path in the tools' cache outside the clone (`$XDG_CACHE_HOME/testrun`, else `~/.cache/testrun`),
 * shared by every clone and worktree on the machine, as the Makefile's helm and MinIO are.
 */
export function testrunCache(...parts: string[]): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "testrun", ...parts);
}

/** A service running as a real child process, started the way production starts it. */
export interface ServiceProcess {
  readonly name: string;
  readonly port: number;
  /** http://127.0.0.1:PORT, for gRPC / Connect clients. */
  readonly url: string;
  readonly process: ChildProcess;
  /** Every line the process wrote to stdout and stderr so far (its structured logs). */
  output(): string[];
  /** Sends a signal and resolves with the exit code once the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Set (to "1") when every package's dist/ was just built from its sources (the tests' global set-up
 * builds it): services then start from their built modules, as the image starts them, without
 * compiling TypeScript at every start (half a second of a core each). Unset (`make run`), sources.
 */
export const builtServicesFlag = "TESTRUN_SERVICES_BUILT";

/**
 * The node arguments that run a service's main module with tracing preloaded: when
 * `builtServicesFlag` says dist/ is current, built, through the image's launcher (kit launch.ts);
 * else its source through tsx. `entry` (a source path relative to the repository) runs another
 * module of the service instead (built: its dist/ twin, with the preload).
 */
export function serviceCommand(name: string, args: readonly string[] = [], entry?: string): string[] {
  const source = entry ?? `services/${name}/src/main.ts`;
  if (process.env[builtServicesFlag] === "1")
    return entry === undefined
      ? [`${repoRoot}services/kit/dist/launch.js`, name, ...args]
      : [
          "--import",
          `${repoRoot}services/kit/dist/telemetry/preload.js`,
          `${repoRoot}${entry.replace(/\/src\//, "/dist/").replace(/\.ts$/, ".js")}`,
          ...args,
        ];
  return [
    "--conditions=source",
    "--import",
    "tsx",
    "--import",
    `${repoRoot}services/kit/src/telemetry/preload.ts`,
    `${repoRoot}${source}`,
    ...args,
  ];
}

/** Runs a one-shot command of a service (such as `migrate`) and resolves with its output; rejects on failure. */
export async function runServiceCommand(
  name: string,
  args: readonly string[],
  env: Record<string, string>,
): Promise<string> {
  const child = spawn(process.execPath, serviceCommand(name, args), {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const [code] = await once(child, "exit");
  if (code !== 0) throw new Error(`${name} ${args.join(" ")} exited ${code}:\n${output}`);
  return output;
}

/**
 * A command line that runs a service some other way than from source: a built copy, say, started
 * as a container image would start it. The process gets `env` and PORT/HOST only, nothing of ours.
 */
export interface LaunchCommand {
  /** The node binary and its arguments. */
  file: string;
  args: readonly string[];
  cwd: string;
  /** The user and group to run as (only when this process may switch user). */
  uid?: number;
  gid?: number;
}

/** How many of its last lines on stderr (and on stdout) an unexpected exit's report shows. */
const lastLinesShown = { stderr: 20, stdout: 5 };

/**
 * Starts a service on a free port (PORT=0) and resolves once it logged that it listens.
 * Rejects with the process's output if it exits first.
 *
 * Once it listens, an exit that `stop()` did not ask for is written to this process's stderr with
 * its name, pid, port, exit code or signal and its last lines, unless `reportExit` is false: a
 * service of a system several suites share may die during one suite and fail the next ones with
 * ECONNREFUSED on its port, and the report says what happened there and when.
 */
export async function startServiceProcess(
  name: string,
  env: Record<string, string>,
  options: {
    onLine?: (line: string) => void;
    keepOutput?: boolean;
    entry?: string;
    launch?: LaunchCommand;
    /** What the process belongs to, for the report of an unexpected exit ("the shared system", say). */
    owner?: string;
    /** Whether an unexpected exit is reported (default true; `make run` shows every line anyway). */
    reportExit?: boolean;
  } = {},
): Promise<ServiceProcess> {
  const keep = options.keepOutput ?? true;
  const { launch } = options;
  const child = launch
    ? spawn(launch.file, launch.args, {
        cwd: launch.cwd,
        env: { PORT: "0", METRICS_PORT: "0", HOST: "127.0.0.1", ...env },
        stdio: ["ignore", "pipe", "pipe"],
        ...(launch.uid !== undefined && { uid: launch.uid }),
        ...(launch.gid !== undefined && { gid: launch.gid }),
      })
    : spawn(process.execPath, serviceCommand(name, [], options.entry), {
        cwd: repoRoot,
        env: { ...process.env, PORT: "0", METRICS_PORT: "0", HOST: "127.0.0.1", ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
  const lines: string[] = [];
  let listening = false;
  // The last lines of each stream, whatever keepOutput says: what an unexpected exit's report shows.
  const tails = { stderr: [] as string[], stdout: [] as string[] };
  const record = (line: string, stream: keyof typeof tails) => {
    // Until it listens, keep what it says even when asked not to: it explains a failed start.
    if (keep || !listening) lines.push(line);
    const tail = tails[stream];
    tail.push(line);
    if (tail.length > lastLinesShown[stream]) tail.shift();
    options.onLine?.(line);
  };
  createInterface({ input: child.stderr }).on("line", (line) => record(line, "stderr"));
  const stdout = createInterface({ input: child.stdout });

  const port = await new Promise<number>((resolve, reject) => {
    const onExit = (code: number | null) =>
      reject(new Error(`${name} exited (${code}) before listening:\n${lines.join("\n")}`));
    child.once("exit", onExit);
    stdout.on("line", (line) => {
      record(line, "stdout");
      const entry = parseJson(line);
      if (entry?.msg === "listening" && typeof entry.port === "number") {
        child.off("exit", onExit);
        listening = true;
        if (!keep) lines.length = 0;
        resolve(entry.port);
      }
    });
  });

  // "close", not "exit": the process's last lines (its logs are written asynchronously) may still
  // be in the pipes when it exits, and output() after stop() must hold them all.
  const exited = once(child, "close").then(([code]) => code as number | null);
  let stopping = false;
  if (options.reportExit ?? true) {
    child.once("close", (code: number | null, signal: NodeJS.Signals | null) => {
      if (stopping) return;
      process.stderr.write(
        unexpectedExitReport({ name, owner: options.owner, pid: child.pid, port, code, signal, tails }),
      );
    });
  }
  return {
    name,
    port,
    url: `http://127.0.0.1:${port}`,
    process: child,
    output: () => [...lines],
    async stop(signal = "SIGTERM") {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** What an exit `stop()` did not ask for says on the tests' stderr. */
export function unexpectedExitReport(exit: {
  name: string;
  owner?: string | undefined;
  pid: number | undefined;
  port: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  tails: { stderr: readonly string[]; stdout: readonly string[] };
}): string {
  const how = exit.signal ? `killed by ${exit.signal}` : `exited with code ${exit.code}`;
  const quoted = (tail: readonly string[]) => tail.map((line) => `  | ${line}\n`).join("");
  return [
    `\n[testing] ${exit.name}${exit.owner ? ` of ${exit.owner}` : ""} (pid ${exit.pid}, port ${exit.port}) ${how} at ${new Date().toISOString()}, unexpectedly: nothing stopped it. Calls to its port fail from now on (ECONNREFUSED).\n`,
    exit.tails.stderr.length > 0
      ? `  its last ${exit.tails.stderr.length} lines on stderr:\n${quoted(exit.tails.stderr)}`
      : "  nothing on stderr.\n",
    exit.tails.stdout.length > 0
      ? `  its last ${exit.tails.stdout.length} lines on stdout:\n${quoted(exit.tails.stdout)}`
      : "",
  ].join("");
}

function parseJson(line: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
