// runSandboxed: runs one command as hostile code (docs/security.md, "User code: Playwright specs").
//
//   const result = await runSandboxed({
//     command: process.execPath, args: ["spec-runner.js"], files: { "spec-runner.js": source },
//     env: { PATH: "/usr/bin:/bin", NAME: value }, deadlineMs: 60_000,
//     proxy: { host: "127.0.0.1", port: egressProxyPort },   // optional: the only way out
//   });
//
// The command sees: its files in a folder of its own, `sandboxHome` (or the caller's `workDir` at
// its own path): its cwd, a tmpfs of `workBytes` holding a copy, copied back when it ends
// (`inspect` reads it first); the environment given and nothing else (HTTP(S)_PROXY added when
// `proxy` is), loopback only (the proxy at 127.0.0.1:`proxyPort` inside), an empty /tmp, the
// `readOnly` host folders, a /proc of its own PID namespace, uid:gid of its own without
// capabilities, and rlimits. At the deadline, on abort, or when it ends, everything it started is
// killed.
//
// Made of util-linux's unshare (PID, mount, network, IPC and UTS namespaces; --kill-child ends the
// namespace with it), setpriv and prlimit, and init.ts (PID 1 inside), which runs the command in a
// user namespace of its own where no namespace can be made. Needs root: a caller that is not gets
// SandboxUnavailable, and nothing runs.
import { spawn } from "node:child_process";
import { randomInt } from "node:crypto";
import { once } from "node:events";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, normalize } from "node:path";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { coveredRoots, type InitConfig, type InitResult } from "./init.js";
import { capOutput } from "./output.js";
import { bridgeToProxy, type ProxyBridge } from "./proxy-bridge.js";

export interface SandboxLimits {
  /** RLIMIT_NPROC for the sandbox's uid: processes and threads. */
  processes: number;
  /** RLIMIT_DATA per process (not RLIMIT_AS: V8 and chromium reserve far more address space than they use). */
  dataBytes: number;
  /** RLIMIT_FSIZE: the largest file it may write. */
  fileBytes: number;
  /** RLIMIT_NOFILE. */
  openFiles: number;
  /** RLIMIT_CPU per process, seconds. */
  cpuSeconds: number;
  /** Bytes of stdout, and of stderr, kept; the rest is dropped. */
  outputBytes: number;
  /** Size of each tmpfs inside (/tmp, /var/tmp, /dev/shm). */
  tmpBytes: number;
  /** Size of the command's folder (a tmpfs): what it may write there, all files together. */
  workBytes: number;
}

export const defaultSandboxLimits: SandboxLimits = {
  processes: 256,
  dataBytes: 2 * 1024 ** 3,
  fileBytes: 256 * 1024 ** 2,
  openFiles: 1024,
  cpuSeconds: 600,
  outputBytes: 1024 ** 2,
  tmpBytes: 64 * 1024 ** 2,
  workBytes: 256 * 1024 ** 2,
};

/** The spec's folder inside the sandbox: cwd and HOME. */
export const sandboxHome = "/home/sandbox";
/** The port of the egress proxy's forwarder on 127.0.0.1 inside. */
export const sandboxProxyPort = 3128;
/**
 * The users (and groups) of sandboxed code: unprivileged ids nothing else uses, one per sandbox
 * running at once, so that one's process limit (RLIMIT_NPROC counts per uid, across every process
 * of the node that shares its user namespace: other executor processes and pods too) or files never
 * meet another's. Each sandbox takes one at random from the range, never one this process holds or
 * that a process it can see runs as; executors on one node that cannot see each other's processes
 * draw from a million, so two sandboxes at once share one about once in 2,000,000/n² (n at once).
 */
export const defaultSandboxUid = 200_000;
export const sandboxUidCount = 1_000_000;
const uidsInUse = new Set<number>();

async function takeUid(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const uid = defaultSandboxUid + randomInt(sandboxUidCount);
    if (uidsInUse.has(uid)) continue;
    uidsInUse.add(uid);
    if ((await processesOf(uid)).length === 0) return uid;
    uidsInUse.delete(uid);
  }
  throw new SandboxUnavailable("no free user id for a sandbox");
}

export interface SandboxOptions {
  command: string;
  args?: string[];
  /** Files written into the sandbox's folder before it starts: relative path → content. */
  files?: Record<string, string | Uint8Array>;
  /**
   * In place of `files`: a folder the caller laid out, which the command sees at its own path (its
   * cwd), and which holds what the command left there once it ends (copied back: symbolic links
   * stay links). The caller removes it.
   */
  workDir?: string;
  /**
   * Host folders the command reads (read-only at their own paths, even under a covered path such
   * as /tmp). Never one of the covered paths or the hidden ones themselves, nor inside a hidden one.
   */
  readOnly?: string[];
  /** Kills the command and everything it started, as the deadline does. */
  signal?: AbortSignal;
  /** The whole environment of the command: nothing of the executor's is added. */
  env?: Record<string, string>;
  deadlineMs: number;
  limits?: Partial<SandboxLimits>;
  /** Default: one of defaultSandboxUid… at random, used by no sandbox or process in sight (takeUid). */
  uid?: number;
  gid?: number;
  /**
   * The executor's egress proxy (browser/egress-proxy.ts). When given, HTTP_PROXY and HTTPS_PROXY
   * (with `proxyCredentials`) point at its forwarder inside; without it, nothing leaves.
   */
  proxy?: { host: string; port: number; username?: string; password?: string };
  /** More paths covered by an empty tmpfs inside (a secrets folder of the executor). */
  hiddenPaths?: string[];
  /**
   * Reads the sandbox's folder (the command's outputs) after the command ends, before it is
   * removed. What is in it was written by hostile code: a symbolic link may point anywhere.
   */
  inspect?: (homeOnHost: string) => Promise<void>;
}

export type SandboxLimitHit = "output" | "fileSize" | "cpu";

export interface SandboxResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** The user and group id the command ran as. */
  uid: number;
  /** A limit the run visibly hit (a memory or process limit shows as the command's own failure). */
  limitHit?: SandboxLimitHit;
  durationMs: number;
}

export class SandboxUnavailable extends Error {
  override name = "SandboxUnavailable";
  /**
   * The end of what the sandbox printed, for the operator's log: the command's own output may be in
   * it (a spec's variables), so it is never in the message, which a test's summary may carry.
   */
  readonly stderr: string | undefined;
  constructor(message: string, stderr?: string) {
    super(message);
    this.stderr = stderr;
  }
}

/** Paths covered besides /tmp, /var/tmp, /dev/shm, /run, /root and /home (init.ts). */
const defaultHiddenPaths = ["/var/run/secrets", "/etc/testrun", "/var/lib/kubelet"];

/**
 * The host folders the command reads: the caller's, and the executor's own node's when that is the
 * command. A covered path itself would bring back all it covers, a hidden one its secrets: refused.
 */
function readOnlyFolders(command: string, asked: readonly string[], hidden: readonly string[]): string[] {
  const folders = new Set(asked.map((path) => normalize(path)));
  if (command === process.execPath) folders.add(dirname(command));
  for (const folder of folders) {
    const refused =
      folder === "/" ||
      !folder.startsWith("/") ||
      [...coveredRoots, ...hidden].some((root) => root === folder || root.startsWith(`${folder}/`)) ||
      hidden.some((root) => folder.startsWith(`${root}/`));
    if (refused) throw new SandboxUnavailable(`${folder} cannot be made readable inside the sandbox`);
  }
  return [...folders];
}

/** The pids of processes of `uid` on this host (zombies included). */
async function processesOf(uid: number): Promise<number[]> {
  const pids = (await readdir("/proc")).filter((name) => /^\d+$/.test(name));
  // Read at once: one by one, a few hundred processes took some 20 ms, at every sandbox's start.
  const statuses = await Promise.all(
    pids.map((pid) => readFile(`/proc/${pid}/status`, "utf8").catch(() => "")),
  );
  return pids.filter((_, i) => Number(/^Uid:\s+(\d+)/m.exec(statuses[i] ?? "")?.[1]) === uid).map(Number);
}

/**
 * Waits until no process of `uid` is left: after a deadline the namespace's processes are killed by
 * the kernel once its init dies, which may be later than unshare's own end. True when none is left.
 */
async function goneWithin(uid: number, ms: number): Promise<boolean> {
  const until = performance.now() + ms;
  while ((await processesOf(uid)).length > 0) {
    if (performance.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

const initScript = fileURLToPath(
  new URL(import.meta.url.endsWith(".ts") ? "./init.ts" : "./init.js", import.meta.url),
);

/**
 * Whether this process can make sandboxes: root on Linux (the executor says at start that it runs
 * no Playwright specs when it cannot: wiring.ts).
 */
export const canMakeSandbox = (): boolean => process.platform === "linux" && process.getuid?.() === 0;

export async function runSandboxed(options: SandboxOptions): Promise<SandboxResult> {
  if (!canMakeSandbox())
    throw new SandboxUnavailable("user code runs only in a sandbox, and making one needs root on Linux");
  const limits = { ...defaultSandboxLimits, ...options.limits };
  const hiddenPaths = [...defaultHiddenPaths, ...(options.hiddenPaths ?? [])];
  const readOnly = readOnlyFolders(options.command, options.readOnly ?? [], hiddenPaths);
  if (options.workDir !== undefined && options.files !== undefined)
    throw new Error("runSandboxed takes files or a workDir, not both");
  const taken = options.uid === undefined ? await takeUid() : undefined;
  const uid = options.uid ?? (taken as number);
  const gid = options.gid ?? uid;
  const started = performance.now();
  let root: string | undefined;
  let bridge: ProxyBridge | undefined;
  // Whether every process of the uid is known to be gone, so that the uid may be used again.
  let uidFree = true;
  try {
    root = await mkdtemp(join(tmpdir(), "testrun-sandbox-"));
    await chmod(root, 0o711);
    const home = options.workDir ?? join(root, "home");
    const io = join(root, "io");
    await mkdir(io, { mode: 0o700 });
    if (options.workDir === undefined) await writeFiles(home, options.files ?? {});
    const env = { ...options.env };
    if (options.proxy) {
      bridge = await bridgeToProxy(join(io, "proxy.sock"), options.proxy);
      const { username, password } = options.proxy;
      const credentials =
        username !== undefined
          ? `${encodeURIComponent(username)}:${encodeURIComponent(password ?? "")}@`
          : "";
      const url = `http://${credentials}127.0.0.1:${sandboxProxyPort}`;
      for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]) env[name] = url;
    }
    const config: InitConfig = {
      uid,
      gid,
      command: options.command,
      args: options.args ?? [],
      env,
      hostHome: home,
      hostIo: io,
      home: options.workDir ?? sandboxHome,
      workBytes: limits.workBytes,
      hiddenPaths,
      readOnly,
      tmpBytes: limits.tmpBytes,
      rlimits: [
        `--nproc=${limits.processes}`,
        `--data=${limits.dataBytes}`,
        `--fsize=${limits.fileBytes}`,
        `--nofile=${limits.openFiles}`,
        `--cpu=${limits.cpuSeconds}`,
        "--core=0",
      ],
      proxyPort: options.proxy ? sandboxProxyPort : undefined,
    };
    const child = spawn(
      "unshare",
      [
        "--pid",
        "--fork",
        "--kill-child=SIGKILL",
        "--mount",
        "--mount-proc",
        "--propagation=private",
        "--net",
        "--ipc",
        "--uts",
        "--",
        process.execPath,
        initScript,
        "--init",
      ],
      // The init's own environment: nothing of the executor's either.
      {
        cwd: root,
        env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
        stdio: ["ignore", "pipe", "pipe", "pipe"],
      },
    );
    const stdout = capOutput(child.stdout as Readable, limits.outputBytes);
    const stderr = capOutput(child.stderr as Readable, limits.outputBytes);
    const control = child.stdio[3] as Readable & Writable;
    let answer = "";
    control.on("data", (chunk: Buffer) => {
      answer += chunk.toString("utf8");
    });
    control.on("error", () => {});
    control.write(`${JSON.stringify(config)}\n`);

    let timedOut = false;
    let killed = false;
    // unshare's child, the init (PID 1), dies with it, and the kernel kills its whole namespace.
    const kill = () => {
      killed = true;
      child.kill("SIGKILL");
    };
    const deadline = setTimeout(() => {
      timedOut = true;
      kill();
    }, options.deadlineMs);
    options.signal?.addEventListener("abort", kill, { once: true });
    if (options.signal?.aborted) kill();
    const [code] = (await once(child, "close")) as [number | null];
    clearTimeout(deadline);
    options.signal?.removeEventListener("abort", kill);
    // Killed from here: the namespace's processes die after unshare did, not before.
    if (killed) uidFree = await goneWithin(uid, 10_000);

    const line = answer.split("\n")[0];
    const result: InitResult = line ? JSON.parse(line) : {};
    if (result.error && !killed) throw new SandboxUnavailable(result.error, stderr.text().slice(-500));
    if (!line && !killed)
      throw new SandboxUnavailable(
        `the sandbox ended without a result (unshare exit ${code})`,
        stderr.text().slice(-500),
      );
    const signal = result.signal ?? null;
    const limitHit: SandboxLimitHit | undefined =
      signal === "SIGXFSZ"
        ? "fileSize"
        : signal === "SIGXCPU"
          ? "cpu"
          : stdout.overflowed || stderr.overflowed
            ? "output"
            : undefined;
    if (options.inspect) await options.inspect(home);
    return {
      exitCode: killed ? null : (result.exitCode ?? null),
      signal: killed ? "SIGKILL" : signal,
      stdout: stdout.text(),
      stderr: stderr.text(),
      timedOut,
      limitHit,
      uid,
      durationMs: performance.now() - started,
    };
  } finally {
    await bridge?.close();
    if (root) await rm(root, { recursive: true, force: true });
    // Every process of the uid is gone by now (its namespace ended with its init), so it is free;
    // one that outlived a kill keeps its uid from being used again in this process.
    if (taken !== undefined && uidFree) uidsInUse.delete(taken);
  }
}

/** Writes the given files under `home` (paths must stay inside it); the init hands their copy to the sandbox's user. */
async function writeFiles(home: string, files: Record<string, string | Uint8Array>): Promise<void> {
  await mkdir(home, { mode: 0o755 });
  for (const [name, content] of Object.entries(files)) {
    const relative = normalize(name);
    if (relative.startsWith("..") || relative.startsWith("/") || relative === ".")
      throw new Error(`sandbox file path must stay inside its folder: ${JSON.stringify(name)}`);
    const path = join(home, relative);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content, { mode: 0o644 });
  }
}
