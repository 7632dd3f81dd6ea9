// The sandbox's init (docs/security.md, "User code: Playwright specs"): PID 1 of the namespaces
// `unshare` made, still root there, started by run.ts. It covers the executor's secrets with empty
// file systems, brings the loopback up, serves the proxy forwarder, then runs the command in a user
// namespace of its own where no namespace can be made, as the sandbox's uid without capabilities,
// under its rlimits, with its environment (which the tools running as root before it never get).
// When the command ends (or the executor's end of the control socket closes) it kills every other
// process of the namespace, so nothing the command started outlives it.
//
// Run directly by node (type stripping in development, dist/ in the image): node built-ins only,
// erasable TypeScript only. The control socket is fd 3: one JSON line in (InitConfig), one out.
import { execFileSync, spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { connect, createServer, Socket } from "node:net";

export interface InitConfig {
  uid: number;
  gid: number;
  command: string;
  args: string[];
  env: Record<string, string>;
  /** The command's folder on the host (laid out by the executor): copied in, and back out at the end. */
  hostHome: string;
  hostIo: string;
  /** Where the command sees its folder (its cwd): a tmpfs of workBytes, so it cannot fill the disk. */
  home: string;
  workBytes: number;
  hiddenPaths: string[];
  /**
   * Host folders the command reads (its node, @playwright/test), read-only at their own paths even
   * where a covered path holds them: a clone under /tmp (as CI makes) or a checkout under /home.
   */
  readOnly: string[];
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
/** Inside the namespace: where host folders are put aside before the paths holding them are covered. */
const asideHome = "/run/testrun-home";
const asideReadOnly = "/run/testrun-kept";
/** What init.ts covers with an empty tmpfs, besides InitConfig.hiddenPaths. */
export const coveredRoots = ["/tmp", "/var/tmp", "/dev/shm", "/run", "/root", "/home"];

const tool = (name: string) =>
  ["/usr/bin", "/bin", "/usr/sbin", "/sbin"].map((dir) => `${dir}/${name}`).find(existsSync) ?? name;

const run = (name: string, args: string[]) => execFileSync(tool(name), args, { stdio: "ignore" });
/**
 * Files (inodes) each tmpfs holds: its size bounds its bytes only, and empty files take none. Without
 * it a spec made a million empty files in its folder in 8 s (three million fit), kernel memory past
 * every size here, which the copy back then wrote to the executor's disk, one inode each.
 */
export const tmpfsInodes = 65_536;
const tmpfs = (path: string, options: string) =>
  run("mount", ["-t", "tmpfs", "-o", `${options},nr_inodes=${tmpfsInodes}`, "tmpfs", path]);

const under = (path: string, roots: string[]) =>
  roots.some((root) => path === root || path.startsWith(`${root}/`));

function setUp(config: InitConfig): void {
  run("mount", ["--make-rprivate", "/"]);
  run("ip", ["link", "set", "lo", "up"]);
  // The host folders the command reaches are put aside under /run first: the paths that hold them
  // are covered next.
  // /run holds the command's environment file too (writeEnvironment: a ' takes 4 bytes there): a
  // project's variables past 1 MiB failed the set-up, which said this executor could not run specs.
  const environmentBytes = Object.entries(config.env).reduce(
    (bytes, [name, value]) => bytes + Buffer.byteLength(name) + 4 * Buffer.byteLength(value) + 4,
    0,
  );
  tmpfs("/run", `size=${1024 ** 2 + environmentBytes},mode=0755`);
  const aside = (from: string, to: string) => {
    mkdirSync(to, { recursive: true, mode: 0o700 });
    run("mount", ["--bind", from, to]);
  };
  aside(config.hostIo, ioInside);
  aside(config.hostHome, asideHome);
  config.readOnly.forEach((path, i) => {
    aside(path, `${asideReadOnly}/${i}`);
  });
  tmpfs("/home", "size=1m,mode=0755");
  for (const path of ["/tmp", "/var/tmp", "/dev/shm"])
    if (existsSync(path)) tmpfs(path, `size=${config.tmpBytes},mode=1777,nosuid,nodev`);
  for (const path of ["/root", ...config.hiddenPaths])
    if (existsSync(path)) tmpfs(path, "size=64k,mode=0755");
  // Read-only folders come back at their own paths, their covered parents still empty around them.
  config.readOnly.forEach((path, i) => {
    if (!under(path, [...coveredRoots, ...config.hiddenPaths])) return;
    mkdirSync(path, { recursive: true });
    run("mount", ["--bind", `${asideReadOnly}/${i}`, path]);
    run("mount", ["-o", "remount,bind,ro", path]);
  });
  // The command's folder: a bounded tmpfs holding a copy of the executor's, the command's own.
  mkdirSync(config.home, { recursive: true });
  tmpfs(config.home, `size=${config.workBytes},mode=0755,nosuid,nodev`);
  run("cp", ["-a", "--", `${asideHome}/.`, `${config.home}/`]);
  run("chown", ["-R", "--no-dereference", `${config.uid}:${config.gid}`, "--", config.home]);
  writeEnvironment(config);

  // Should the pod run out of memory, the kernel kills the sandbox's processes before the executor.
  writeFileSync("/proc/self/oom_score_adj", "1000");
}

/**
 * The command's folder back to the executor's, once nothing of the command runs: cp -a copies
 * symbolic links as links (never what they point at) and at most the tmpfs's bounded size. Into an
 * emptied folder: over what the executor laid out, cp (as root) writes a file through a symbolic
 * link of the executor's, and fails on a directory where the executor's link was (a spec made
 * node_modules/@playwright/test one), which said this executor could not run specs.
 */
function copyBack(config: InitConfig): string | undefined {
  try {
    for (const name of readdirSync(asideHome))
      rmSync(`${asideHome}/${name}`, { recursive: true, force: true });
    run("cp", ["-a", "--", `${config.home}/.`, `${asideHome}/`]);
    return undefined;
  } catch (error) {
    return `could not copy the command's folder back: ${(error as Error).message}`;
  }
}

/**
 * Maps every user and group id of the init's user namespace (the executor's) to itself in the
 * command's, which `unshare --user` made without a map (its own `--map-users` needs newuidmap,
 * which the image lacks): files keep their owners, setpriv reaches the sandbox's uid, and the
 * executor reads the same uids in /proc. Root of the parent namespace may write it, once, whole.
 */
function mapIds(pid: number): void {
  for (const file of ["uid_map", "gid_map"]) {
    // Each line of our own map: first id here, first id in our parent, count. Here → here.
    const identity = readFileSync(`/proc/self/${file}`, "utf8")
      .trim()
      .split("\n")
      .map((line) => {
        const [first, , count] = line.trim().split(/\s+/);
        return `${first} ${first} ${count}`;
      });
    writeFileSync(`/proc/${pid}/${file}`, `${identity.join("\n")}\n`);
  }
}

/**
 * What `unshare --user` runs, before setpriv: two shells, on fd 3 to the init. The first says the
 * namespace exists, waits until the init mapped its ids, then execs the second: a process exec'd
 * before its namespace maps its root keeps no capability there, one exec'd after is its root. The
 * second, in a user namespace of its own (it checks), sets that namespace's limits on namespaces to
 * 0 and execs setpriv: the limits under /proc/sys/user are the current user namespace's, counted
 * along its ancestors, so nothing the command starts can make a namespace (ENOSPC), whatever the
 * node allows. A user namespace is the one an unprivileged process could make itself, and in it it
 * would hold CAP_SYS_ADMIN over new mount and network namespaces: much more of the kernel to
 * attack; any other namespace needs a capability the command lacks. In the init's own namespace, 0
 * would refuse namespaces to the whole node: hence the check.
 */
const awaitMap = `echo ready >&3 && IFS= read -r go <&3 && [ "$go" = mapped ] && exec ${tool("sh")} -c "$1" "$@"`;
const forbidNamespaces = `[ "$(${tool("readlink")} /proc/self/ns/user)" != "$1" ] && shift &&
for limit in /proc/sys/user/max_*_namespaces; do echo 0 > "$limit" || exit 1; done &&
echo limited >&3 && exec "$@" 3<&-`;

/** The command's environment, for the shell that starts it: readable by the sandbox's uid alone. */
const environmentFile = "/run/command/environment";

/**
 * Writes the command's environment where only the command's uid reads it: neither in the arguments
 * of the tools before it, which /proc/<pid>/cmdline shows to anyone on the node (process monitors
 * collect them), nor in their environment, in which they run as root (a variable named LD_PRELOAD
 * would load its library there). Values single-quoted for sh; names are identifiers (the catalog's
 * variable names are). The file stays: it holds nothing the command does not hold in its environment.
 */
function writeEnvironment(config: InitConfig): void {
  const lines = Object.entries(config.env).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new Error(`${JSON.stringify(name)} is not a variable name`);
    return `${name}='${value.replaceAll("'", "'\\''")}'\n`;
  });
  mkdirSync("/run/command", { mode: 0o700 });
  writeFileSync(environmentFile, lines.join(""), { mode: 0o400 });
  run("chown", ["-R", `${config.uid}:${config.gid}`, "--", "/run/command"]);
}

/**
 * As the command's uid, after every tool that runs as root: its environment, exactly as given (sh
 * adds PWD unless given), then the command itself. `set -a` exports what the file assigns.
 */
const startCommand = `unset PWD; set -a && . ${environmentFile} && exec "$@"`;

/** keyctl's number by architecture (the image's: amd64 and arm64). */
const keyctlSyscall: Record<string, number> = { x64: 250, arm64: 219 };

/**
 * perl (perl-base, essential in Debian), as the sandbox's uid with no environment (so no PERL5OPT of
 * the spec's), joins a session keyring of its own and execs the rest: the session keyring is
 * inherited through setpriv and the user namespace, so the command could otherwise read every key of
 * the executor's and add keys that every other sandbox of the executor reads. Where keyctl is
 * refused (the runtime's default seccomp profile) or absent, no process here can reach a keyring
 * either; any other failure stops the sandbox.
 */
function newSessionKeyring(): string[] {
  const keyctl = keyctlSyscall[process.arch];
  if (keyctl === undefined) throw new Error(`no keyctl system call number for ${process.arch}`);
  return [
    tool("perl"),
    "-e",
    `syscall(${keyctl}, 1, 0) >= 0 or $!{EPERM} or $!{ENOSYS} or die "session keyring: $!\n"; exec { $ARGV[0] } @ARGV or die "exec $ARGV[0]: $!\n"`,
    "--",
  ];
}

/**
 * The command line of the command, from `unshare --user` on: the shells above, setpriv (the
 * sandbox's uid, no capability in any set, no new privileges), prlimit, then `env -i` and the shell
 * that gives the command its environment (writeEnvironment): the tools before it run as root and get
 * none of it, so a variable such as LD_PRELOAD or LD_LIBRARY_PATH reaches only the command, and no
 * value is in any process's arguments.
 */
export function commandLine(config: InitConfig): string[] {
  return [
    "--user",
    "--",
    tool("sh"),
    "-c",
    awaitMap,
    "sh",
    forbidNamespaces,
    readlinkSync("/proc/self/ns/user"),
    tool("setpriv"),
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
    tool("env"),
    "-i",
    ...newSessionKeyring(),
    tool("sh"),
    "-c",
    startCommand,
    "sh",
    config.command,
    ...config.args,
  ];
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
  const reply = (outcome: InitResult) => {
    let result = outcome;
    // Nothing the command started is left: kill(-1) from PID 1 reaches every other process here.
    // Only as PID 1 of its own namespace: anywhere else, kill(-1) as root would end every process
    // of the host (a CI run died of something that did).
    if (process.pid === 1)
      try {
        process.kill(-1, "SIGKILL");
      } catch {}
    const copyError = result.error === undefined ? copyBack(config) : undefined;
    if (copyError) result = { error: copyError };
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
      const child = spawn(tool("unshare"), commandLine(config), {
        cwd: config.home,
        env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
        stdio: ["ignore", "inherit", "inherit", "pipe"],
      });
      // "ready": map its ids; "limited": its namespace is set, and what runs is the command's.
      const steps = child.stdio[3] as Socket;
      let said = "";
      let unmapped = "";
      steps.on("error", () => {});
      steps.on("data", (chunk: Buffer) => {
        said += chunk.toString("utf8");
        if (said !== "ready\n" || child.pid === undefined) return;
        try {
          mapIds(child.pid);
          steps.write("mapped\n");
        } catch (error) {
          unmapped = `: its ids could not be mapped (${(error as Error).message})`;
          child.kill("SIGKILL");
        }
      });
      child.once("error", (error) => reply({ error: `could not start: ${error.message}` }));
      // "close", not "exit": after fd 3's last word too (the shells close it before setpriv).
      child.once("close", (exitCode, signal) =>
        reply(
          said === "ready\nlimited\n"
            ? { exitCode, signal }
            : { error: `could not make the command's user namespace${unmapped}` },
        ),
      );
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
