// How the runner's process is started and ended. `launchDirect` is a plain child process in a
// process group of its own; the sandbox (docs/security.md, "User code") stands in for it where it
// is available, with the same contract.
import { spawn } from "node:child_process";
import { runSandboxed, type SandboxLimits } from "../sandbox/index.js";

export interface LaunchRequest {
  command: string;
  args: readonly string[];
  cwd: string;
  /** Its whole environment: nothing of the executor's is passed on. */
  env: Record<string, string>;
  /** Past it, the process and everything it started are killed. */
  deadlineMs: number;
  signal?: AbortSignal;
  /** Output kept, at most (the rest is counted, not kept). */
  maxOutputBytes: number;
}

export interface LaunchResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** stdout and stderr interleaved, cut at maxOutputBytes. */
  output: string;
}

export type Launcher = (request: LaunchRequest) => Promise<LaunchResult>;

/** A child process in a process group of its own, killed with its group at the deadline or abort. */
export const launchDirect: Launcher = (request) =>
  new Promise((resolve, reject) => {
    const child = spawn(request.command, [...request.args], {
      cwd: request.cwd,
      env: request.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const chunks: Buffer[] = [];
    let kept = 0;
    const keep = (chunk: Buffer) => {
      if (kept >= request.maxOutputBytes) return;
      const part = chunk.subarray(0, request.maxOutputBytes - kept);
      chunks.push(part);
      kept += part.length;
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    let timedOut = false;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, request.deadlineMs);
    const onAbort = () => killGroup();
    request.signal?.addEventListener("abort", onAbort, { once: true });
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (exitCode, signal) => {
      clearTimeout(timer);
      request.signal?.removeEventListener("abort", onAbort);
      // What it left running in its group goes with it.
      killGroup();
      resolve({ exitCode, signal, timedOut, output: Buffer.concat(chunks).toString("utf8") });
    });
  });

export interface SandboxedLaunchOptions {
  /** The executor's egress proxy: the runner's only way out (its forwarder at 127.0.0.1 inside). */
  proxy?: { host: string; port: number };
  /** Host folders the runner reads: its node is added by the sandbox; @playwright/test's packages. */
  readOnly: readonly string[];
  limits?: Partial<SandboxLimits>;
}

/**
 * The runner in the user-code sandbox (docs/security.md, "User code: Playwright specs"): its own
 * uid, namespaces and limits, its workspace (`cwd`) on a bounded tmpfs at the same path, so the
 * paths the configuration names hold inside and out.
 */
export function sandboxedLauncher(options: SandboxedLaunchOptions): Launcher {
  return async (request) => {
    const result = await runSandboxed({
      command: request.command,
      args: [...request.args],
      env: request.env,
      workDir: request.cwd,
      readOnly: [...options.readOnly],
      deadlineMs: request.deadlineMs,
      signal: request.signal,
      limits: { ...options.limits, outputBytes: request.maxOutputBytes },
      ...(options.proxy && { proxy: options.proxy }),
    });
    return {
      exitCode: result.exitCode,
      signal: result.signal as NodeJS.Signals | null,
      timedOut: result.timedOut,
      output: `${result.stdout}${result.stderr}`.slice(0, request.maxOutputBytes),
    };
  };
}
