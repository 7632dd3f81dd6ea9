// The sandbox's init (docs/security.md, "User code: Playwright specs"): PID 1 of the namespaces
// `unshare` made, still root there, started by run.ts. It covers the executor's secrets with empty
// file systems, brings the loopback up, serves the proxy forwarder, then runs the command as the
// sandbox's uid without capabilities and under its rlimits. When the command ends (or the
// executor's end of the control socket closes) it kills every other process of the namespace, so
// nothing the command started outlives it.
//
// Run directly by node (type stripping in development, dist/ in the image): node built-ins only,
// erasable TypeScript only. The control socket is fd 3: one JSON line in (InitConfig), one out.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { connect, createServer, Socket } from "node:net";

export interface InitConfig {
  uid: number;
  gid: number;
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Host paths, bound inside before /tmp is covered. */
  hostHome: string;
  hostIo: string;
  home: string;
  hiddenPaths: string[];
  /**
   * Host folders kept reachable, read-only, at /run/testrun-kept/<index> even when a covered path
   * holds them: the command's own (node of a clone under /tmp, as in CI, would otherwise vanish
   * with /tmp), which is run from there.
   */
  keptPaths: string[];
  tmpBytes: number;
  /** prlimit's options, e.g. `--nproc=256:256`. */
  rlimits: string[];
  /** The forwarder's port on 127.0.0.1 inside; absent: no way out at all. */
  proxyPort?: number;
}

export interface InitResult {
  exitCode?: number | null;
  signal?: string | null;
  error?: string;
}

/** Inside the namespace: where the executor's Unix socket to its egress proxy is bound. */
export const ioInside = "/run/testrun-sandbox";
export const proxySocketName = "proxy.sock";
/** Inside the namespace: where kept host folders are (InitConfig.keptPaths, by index). */
const keptInside = "/run/testrun-kept";

/** The command as run inside: from its kept folder's place when it lies in one. */
const keptCommand = (config: InitConfig): string => {
  const index = config.keptPaths.findIndex((path) => config.command.startsWith(`${path}/`));
  return index < 0
    ? config.command
    : `${keptInside}/${index}${config.command.slice(config.keptPaths[index]?.length ?? 0)}`;
};

const tool = (name: string) =>
  ["/usr/bin", "/bin", "/usr/sbin", "/sbin"].map((dir) => `${dir}/${name}`).find(existsSync) ?? name;

const run = (name: string, args: string[]) => execFileSync(tool(name), args, { stdio: "ignore" });
const tmpfs = (path: string, options: string) => run("mount", ["-t", "tmpfs", "-o", options, "tmpfs", path]);

function setUp(config: InitConfig): void {
  run("mount", ["--make-rprivate", "/"]);
  run("ip", ["link", "set", "lo", "up"]);
  // The spec's folder and the executor's socket are bound first: both live under paths covered next.
  tmpfs("/home", "size=1m,mode=0755");
  mkdirSync(config.home, { recursive: true });
  run("mount", ["--bind", config.hostHome, config.home]);
  tmpfs("/run", "size=1m,mode=0755");
  mkdirSync(ioInside, { mode: 0o700 });
  run("mount", ["--bind", config.hostIo, ioInside]);
  // Kept folders are bound read-only under /run (covered already) before their parents are
  // covered; the command is run from there (keptCommand), so no name of theirs shows in /tmp.
  config.keptPaths.filter(existsSync).forEach((path, i) => {
    const aside = `${keptInside}/${i}`;
    mkdirSync(aside, { recursive: true });
    run("mount", ["--bind", path, aside]);
    run("mount", ["-o", "remount,bind,ro", aside]);
  });
  for (const path of ["/tmp", "/var/tmp", "/dev/shm"])
    if (existsSync(path)) tmpfs(path, `size=${config.tmpBytes},mode=1777,nosuid,nodev`);
  for (const path of ["/root", ...config.hiddenPaths])
    if (existsSync(path)) tmpfs(path, "size=64k,mode=0755");

  // Should the pod run out of memory, the kernel kills the sandbox's processes before the executor.
  writeFileSync("/proc/self/oom_score_adj", "1000");
}

/** 127.0.0.1:port inside → the executor's Unix socket → its egress proxy. */
function forward(port: number): Promise<void> {
  const server = createServer((client) => {
    const upstream = connect(`${ioInside}/${proxySocketName}`);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
}

function start(config: InitConfig, control: Socket): void {
  const reply = (result: InitResult) => {
    // Nothing the command started is left: kill(-1) from PID 1 reaches every other process here.
    // Only as PID 1 of its own namespace: anywhere else, kill(-1) as root would end every process
    // of the host (a CI run died of something that did).
    if (process.pid === 1)
      try {
        process.kill(-1, "SIGKILL");
      } catch {}
    control.end(`${JSON.stringify(result)}\n`, () => process.exit(0));
  };
  control.on("close", () => reply({ error: "the executor went away" }));
  try {
    setUp(config);
  } catch (error) {
    reply({ error: `sandbox set-up failed: ${(error as Error).message}` });
    return;
  }
  (config.proxyPort === undefined ? Promise.resolve() : forward(config.proxyPort)).then(
    () => {
      const child = spawn(
        tool("setpriv"),
        [
          `--reuid=${config.uid}`,
          `--regid=${config.gid}`,
          "--clear-groups",
          "--inh-caps=-all",
          "--bounding-set=-all",
          "--no-new-privs",
          "--",
          tool("prlimit"),
          ...config.rlimits,
          "--",
          keptCommand(config),
          ...config.args,
        ],
        { cwd: config.home, env: config.env, stdio: ["ignore", "inherit", "inherit"] },
      );
      child.once("error", (error) => reply({ error: `could not start: ${error.message}` }));
      child.once("exit", (exitCode, signal) => reply({ exitCode, signal }));
    },
    (error: Error) => reply({ error: `proxy forwarder failed: ${error.message}` }),
  );
}

if (process.argv[2] === "--init") {
  const control = new Socket({ fd: 3, readable: true, writable: true });
  let buffered = "";
  const onData = (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    const end = buffered.indexOf("\n");
    if (end < 0) return;
    control.off("data", onData);
    start(JSON.parse(buffered.slice(0, end)) as InitConfig, control);
  };
  control.on("data", onData);
}
