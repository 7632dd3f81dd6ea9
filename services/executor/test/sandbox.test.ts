// The sandbox for user code attacked with real processes (docs/security.md, "User code: Playwright
// specs"): each test runs what a hostile spec would and checks it was contained. Runs as root (the
// sandbox needs it), as the tests here do.
import { execFile } from "node:child_process";
import { randomInt } from "node:crypto";
import { promises as dns } from "node:dns";
import { once } from "node:events";
import { chmod, lstat, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { EgressGuard, EgressPolicy, parseAllowList, type Resolve } from "@testrun/kit/egress";
import { expect } from "chai";
import { type EgressProxy, startEgressProxy } from "../src/browser/egress-proxy.js";
import {
  defaultSandboxUid,
  runSandboxed,
  type SandboxOptions,
  sandboxUidCount,
} from "../src/sandbox/index.js";
import { commandLine, tmpfsInodes } from "../src/sandbox/init.js";
import { maxBridgeConnections } from "../src/sandbox/proxy-bridge.js";
import { sandboxProcesses } from "./sandbox-processes.js";

const node = process.execPath;
const secret = "executor-secret-5f1c9a7e";

/** The uids of this file's sandboxes, checked for leftovers after each test. */
const used = new Set<number>();
const sandboxed = async (options: SandboxOptions) => {
  const result = await runSandboxed(options);
  used.add(result.uid);
  return result;
};
/**
 * A fork bomb under a limit of 64 processes, as a uid drawn for it, going off until `stop()` (at
 * most a minute): however loaded the machine, it lasts as long as the test looks at it.
 */
const forkBomb = () => {
  const uid = defaultSandboxUid + randomInt(sandboxUidCount);
  used.add(uid);
  const stopping = new AbortController();
  let ended = false;
  const bombing = runSandboxed({
    uid,
    command: "/bin/sh",
    // The sleep first: forked once the bomb filled the limit, it would fail and end the shell.
    args: ["-c", "sleep 60 & s=$!; bomb() { bomb | bomb & }; bomb; wait $s"],
    deadlineMs: 60_000,
    limits: { processes: 64 },
    signal: stopping.signal,
  }).finally(() => {
    ended = true;
  });
  /** Resolves once `count` of its processes run. */
  const reaches = async (count: number) => {
    while ((await sandboxProcesses([uid])).length < count) {
      if (ended) throw new Error(`the bomb ended before ${count} of its processes ran`);
      await new Promise((done) => setTimeout(done, 20));
    }
  };
  /** Ends it; resolves with its result. */
  const stop = () => {
    stopping.abort();
    return bombing;
  };
  return { uid, reaches, stop };
};
/** Runs a script with node in the sandbox; stdout is what the script printed. */
const runScript = (script: string, options: Partial<SandboxOptions> = {}) =>
  sandboxed({ command: node, args: ["-e", script], deadlineMs: 20_000, ...options });

/** A TCP server on `host` counting the connections it accepted. */
async function listener(host: string): Promise<{ server: Server; port: number; accepted: () => number }> {
  let accepted = 0;
  const server = createServer((socket) => {
    accepted += 1;
    socket.end("hello");
  });
  server.listen(0, host);
  await once(server, "listening");
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return { server, port: address.port, accepted: () => accepted };
}

/** What `net.connect(port, host)` got inside, within 2 s: "connected" or the error's code. */
const connectScript = (host: string, port: number) => `
  const socket = require("node:net").connect(${port}, ${JSON.stringify(host)});
  socket.setTimeout(2000, () => { console.log("timeout"); process.exit(0); });
  socket.on("connect", () => { console.log("connected"); process.exit(0); });
  socket.on("error", (e) => { console.log(e.code); process.exit(0); });`;

describe("the sandbox for user code", function () {
  this.timeout(60_000);

  before(() => {
    // What the executor holds: a spec must see none of it.
    process.env.EXECUTOR_TOKEN_FOR_SANDBOX_TEST = secret;
  });
  after(() => {
    delete process.env.EXECUTOR_TOKEN_FOR_SANDBOX_TEST;
  });
  afterEach(async () => {
    // Only this file's uids: other files may run sandboxes at the same time.
    expect(await sandboxProcesses([...used]), "processes of the sandbox's uid left running").to.deep.equal(
      [],
    );
    used.clear();
  });

  it("gives the command only the environment it was given, in a folder of its own as its own user", async () => {
    const result = await runScript(
      `console.log(JSON.stringify({ env: process.env, uid: process.getuid(), cwd: process.cwd(), home: require("os").homedir(),
        files: require("fs").readdirSync("."), spec: require("fs").readFileSync("spec.ts", "utf8") }))`,
      {
        env: { NAME: "value", HOME: "/home/sandbox" },
        files: { "spec.ts": "test('a', () => {})", "lib/helper.ts": "x" },
      },
    );
    expect(result.exitCode, result.stderr).to.equal(0);
    const seen = JSON.parse(result.stdout);
    expect(seen.env).to.deep.equal({ NAME: "value", HOME: "/home/sandbox" });
    // A user of its own: from the sandboxes' range, never the executor's (root here).
    expect(seen.uid).to.be.within(defaultSandboxUid, defaultSandboxUid + sandboxUidCount - 1);
    expect(seen.cwd).to.equal("/home/sandbox");
    expect(seen.files.sort()).to.deep.equal(["lib", "spec.ts"]);
    expect(seen.spec).to.equal("test('a', () => {})");
    expect(result.stdout).not.to.include(secret);
  });

  it("gives the command its environment exactly, whatever the values hold, and puts no value in a command line", async () => {
    const env = { QUOTES: `it's "x" \\ $HOME \`id\``, LINES: "a\nb\n", EMPTY: "", PATH: "/usr/bin:/bin" };
    const result = await runScript("console.log(JSON.stringify(process.env))", { env });
    expect(result.exitCode, result.stderr).to.equal(0);
    expect(JSON.parse(result.stdout)).to.deep.equal(env);
    // The tools before the command show their arguments to anyone on the node (/proc/<pid>/cmdline).
    const line = commandLine({
      uid: defaultSandboxUid,
      gid: defaultSandboxUid,
      command: "/bin/true",
      args: [],
      env: { SECRET: secret },
      hostHome: "/nonexistent",
      hostIo: "/nonexistent",
      home: "/home/sandbox",
      workBytes: 1024,
      hiddenPaths: [],
      readOnly: [],
      tmpBytes: 1024,
      rlimits: ["--nproc=1:1"],
    });
    expect(line.join(" ")).not.to.include(secret);
  });

  it("gives the command an environment of 1.3 MB (40 values of quotes, each the catalog's largest value, 8 KiB)", async () => {
    // Before, its file did not fit in the sandbox's /run (1 MiB): the set-up failed, "cannot run specs".
    const env: Record<string, string> = {};
    for (let i = 0; i < 40; i++) env[`V${i}`] = "'".repeat(8192);
    const result = await runScript(
      'console.log(Object.keys(process.env).length, process.env.V39 === "\'".repeat(8192))',
      {
        env,
      },
    );
    expect(result.stdout.trim(), result.stderr).to.equal("40 true");
  });

  it("gives its environment to the command alone, not to the tools that run as root before it", async () => {
    // A spec's variable named LD_PRELOAD (or LD_LIBRARY_PATH) would have run its library as root
    // of the sandbox in setpriv: ld.so says which programs it ran with the variable.
    const result = await sandboxed({ command: "/bin/true", env: { LD_DEBUG: "files" }, deadlineMs: 10_000 });
    const started = [...result.stderr.matchAll(/transferring control: (\S+)/g)].map((match) => match[1]);
    expect(started).to.deep.equal(["/bin/true"]);
  });

  it("cannot read the executor's /proc/<pid>/environ, nor see its processes", async () => {
    const result = await runScript(`
      const fs = require("fs");
      const attempt = (path) => { try { return fs.readFileSync(path, "utf8"); } catch (e) { return e.code; } };
      console.log(JSON.stringify({
        executor: attempt("/proc/${process.pid}/environ"),
        init: attempt("/proc/1/environ"),
        pids: fs.readdirSync("/proc").filter((n) => /^\\d+$/.test(n)).length,
      }));`);
    const seen = JSON.parse(result.stdout);
    expect(result.stdout).not.to.include(secret);
    expect(seen.executor).to.be.oneOf(["ENOENT", "EACCES"]);
    expect(seen.init).to.equal("EACCES");
    // Its init, the command and nothing else of the host: the host has hundreds.
    expect(seen.pids).to.be.below(5);
  });

  it("cannot read a token file the executor keeps, even one anybody may read", async () => {
    const inTmp = await mkdtemp(join(tmpdir(), "executor-"));
    const secrets = await mkdtemp("/var/lib/testrun-sandbox-test-");
    try {
      await chmod(inTmp, 0o755);
      await chmod(secrets, 0o755);
      await writeFile(join(inTmp, "token"), secret, { mode: 0o644 });
      await writeFile(join(secrets, "token"), secret, { mode: 0o644 });
      const result = await sandboxed({
        command: node,
        args: [
          "-e",
          `const fs = require("fs"); for (const path of process.argv.slice(1)) { try { console.log(fs.readFileSync(path, "utf8")); } catch (e) { console.log(e.code); } }`,
          join(inTmp, "token"),
          join(secrets, "token"),
        ],
        deadlineMs: 20_000,
        hiddenPaths: [secrets],
      });
      expect(result.stdout).not.to.include(secret);
      expect(result.stdout.trim().split("\n")).to.deep.equal(["ENOENT", "ENOENT"]);
    } finally {
      await rm(inTmp, { recursive: true, force: true });
      await rm(secrets, { recursive: true, force: true });
    }
  });

  it("cannot connect to the executor's loopback ports (runs, Redis, PostgreSQL) nor 169.254.169.254", async () => {
    const internal = await listener("127.0.0.1");
    try {
      const loopback = await runScript(connectScript("127.0.0.1", internal.port));
      const metadata = await runScript(connectScript("169.254.169.254", 80));
      expect(loopback.stdout.trim()).to.equal("ECONNREFUSED");
      expect(metadata.stdout.trim()).to.equal("ENETUNREACH");
      expect(internal.accepted()).to.equal(0);
    } finally {
      internal.server.close();
    }
  });

  describe("through the executor's egress proxy", () => {
    const resolve: Resolve = async (hostname, family) =>
      hostname === "allowed.test"
        ? [{ address: "127.0.0.2", family: 4 }]
        : dns.lookup(hostname, { all: true, family: family as 0 | 4 | 6 });
    let proxy: EgressProxy;
    let target: HttpServer;
    let targetPort: number;
    let internal: Awaited<ReturnType<typeof listener>>;

    before(async () => {
      const guard = new EgressGuard(new EgressPolicy({ allow: parseAllowList("127.0.0.2/32") }), { resolve });
      proxy = await startEgressProxy(guard);
      target = createHttpServer((_req, res) => res.end("hello from the allowed target"));
      target.listen(0, "127.0.0.2");
      await once(target, "listening");
      targetPort = (target.address() as { port: number }).port;
      internal = await listener("127.0.0.1");
    });
    after(async () => {
      await proxy.close();
      target.close();
      internal.server.close();
    });

    const fetchScript = (url: string) => `
      fetch(${JSON.stringify(url)}).then(async (r) => console.log(r.status + " " + (await r.text())), (e) => console.log("error " + (e.cause?.message ?? e.message)));`;
    const throughProxy = (url: string) => {
      const { username, password } = proxy;
      return runScript(fetchScript(url), {
        env: { NODE_USE_ENV_PROXY: "1" },
        proxy: { host: "127.0.0.1", port: Number(new URL(proxy.server).port), username, password },
      });
    };

    it("fetches an allowed target", async () => {
      const result = await throughProxy(`http://allowed.test:${targetPort}/`);
      expect(result.stdout.trim(), result.stderr).to.equal("200 hello from the allowed target");
    });

    it("is refused what the egress guard refuses (the executor's loopback)", async () => {
      // A plain proxy request by hand (fetch's tunnel only says it was cancelled): the proxy's answer.
      const { username, password } = proxy;
      const result = await runScript(
        `const proxy = new URL(process.env.HTTP_PROXY);
        const auth = "Basic " + Buffer.from(decodeURIComponent(proxy.username) + ":" + decodeURIComponent(proxy.password)).toString("base64");
        require("node:http").get({ host: proxy.hostname, port: proxy.port, path: "http://127.0.0.1:${internal.port}/",
          headers: { "proxy-authorization": auth } }, (res) => { let body = ""; res.on("data", (c) => (body += c));
          res.on("end", () => console.log(res.statusCode + " " + body)); }).on("error", (e) => console.log("error " + e.code));`,
        { proxy: { host: "127.0.0.1", port: Number(new URL(proxy.server).port), username, password } },
      );
      expect(result.stdout.trim()).to.equal("502 could not connect to the host");
      expect(internal.accepted()).to.equal(0);
    });
  });

  it("holds at most maxBridgeConnections connections to the executor's egress proxy at once", async () => {
    // Before, one sandbox held thousands, two of the executor's descriptors each and the slots of the
    // egress proxy every other test of the executor shares. Its server answers each connection and
    // keeps it open: the sandbox opens 300 and counts those answered and those closed unanswered.
    const held = new Set<Socket>();
    const proxyServer = createServer((socket) => {
      held.add(socket);
      socket.on("error", () => {});
      socket.write("hi");
    });
    proxyServer.listen(0, "127.0.0.1");
    await once(proxyServer, "listening");
    try {
      const port = (proxyServer.address() as { port: number }).port;
      const result = await runScript(
        `const net = require("node:net"); let answered = 0, closed = 0;
        const settle = () => { if (answered + closed === 300) { console.log(answered + " " + closed); process.exit(0); } };
        for (let i = 0; i < 300; i++) {
          const s = net.connect(3128, "127.0.0.1"); let got = false;
          s.on("data", () => { if (!got) { got = true; answered++; settle(); } });
          s.on("close", () => { if (!got) { got = true; closed++; settle(); } });
          s.on("error", () => {});
        }`,
        { proxy: { host: "127.0.0.1", port } },
      );
      expect(result.stdout.trim(), result.stderr).to.equal(
        `${maxBridgeConnections} ${300 - maxBridgeConnections}`,
      );
      expect(held.size).to.equal(maxBridgeConnections);
    } finally {
      for (const socket of held) socket.destroy();
      proxyServer.close();
    }
  });

  it("runs sandboxes at once as different users, each in its own namespaces", async () => {
    const script = `const fs = require("fs"); fs.writeFileSync("/tmp/mine", "x");
      console.log(JSON.stringify({ uid: process.getuid(), tmp: fs.readdirSync("/tmp"), pids: fs.readdirSync("/proc").filter((n) => /^\\d+$/.test(n)).length }));
      setTimeout(() => {}, 300);`;
    const [one, two] = await Promise.all([runScript(script), runScript(script)]);
    const [a, b] = [JSON.parse(one.stdout), JSON.parse(two.stdout)];
    expect(a.uid).not.to.equal(b.uid);
    // Each its own /tmp: its file, and only the way to the executor's node when /tmp holds it (a
    // clone under /tmp, as CI makes: that folder alone is kept, read-only).
    const kept = process.execPath.startsWith("/tmp/") ? [process.execPath.split("/")[2]] : [];
    const own = [...kept, "mine"].sort();
    expect([a.tmp.sort(), b.tmp.sort()]).to.deep.equal([own, own]);
    expect([a.pids, b.pids]).to.deep.equal([2, 2]);
  });

  it("stops a fork bomb at its process limit, and the executor keeps working", async () => {
    // A uid of its own, so the count is the bomb's alone.
    const bomb = forkBomb();
    // While the bomb goes off, the executor still starts processes of its own.
    await bomb.reaches(32);
    const { stdout } = await promisify(execFile)("/bin/echo", ["still here"]);
    expect(stdout).to.equal("still here\n");
    expect((await sandboxProcesses([bomb.uid])).length).to.be.at.most(64);
    const result = await bomb.stop();
    expect(result.stderr).to.match(/fork|Resource temporarily unavailable|Cannot fork/i);
  });

  it("keeps a fork bomb from starving another sandbox beside it, even one of the same uid", async () => {
    // Each sandbox is a user namespace of its own, and the kernel counts RLIMIT_NPROC per user
    // namespace and uid: a uid two sandboxes drew by chance (or two executors on one node) is not
    // one process limit for both.
    const bomb = forkBomb();
    const { uid } = bomb;
    await bomb.reaches(48);
    // 41 processes: with the bomb's 48 or more, past a limit of 64 they shared.
    const beside = await runSandboxed({
      uid,
      command: "/bin/sh",
      args: ["-c", 'i=0; while [ $i -lt 40 ]; do sleep 1 & i=$((i + 1)); done; wait; echo "started 40"'],
      deadlineMs: 10_000,
      limits: { processes: 64 },
    });
    const bombed = await bomb.stop();
    expect(beside.stderr).to.equal("");
    expect(beside.stdout).to.equal("started 40\n");
    expect(beside.exitCode).to.equal(0);
    expect(bombed.stderr).to.match(/fork|Resource temporarily unavailable|Cannot fork/i);
  });

  it("cannot make a namespace of its own: no user namespace (unshare -U, -Urm), nor a network one", async () => {
    const attempts = ["unshare -U true", "unshare -Urm true", "unshare -n true"];
    const script = attempts.map((attempt) => `${attempt}; echo "${attempt}: $?"`).join("; ");
    const result = await sandboxed({ command: "/bin/sh", args: ["-c", script], deadlineMs: 10_000 });
    expect(result.stdout.trim().split("\n")).to.deep.equal(attempts.map((attempt) => `${attempt}: 1`));
    // The limit on user namespaces (ENOSPC); a network namespace needs a capability it lacks.
    expect(result.stderr.trim().split("\n")).to.deep.equal([
      "unshare: unshare failed: No space left on device",
      "unshare: unshare failed: No space left on device",
      "unshare: unshare failed: Operation not permitted",
    ]);
    // No empty claim: on this host the same uid, unsandboxed, makes one.
    const { stdout } = await promisify(execFile)("setpriv", [
      `--reuid=${result.uid}`,
      `--regid=${result.uid}`,
      "--clear-groups",
      "--",
      "/bin/sh",
      "-c",
      "unshare -Urm true && echo made",
    ]);
    expect(stdout).to.equal("made\n");
  });

  it("starts where the executor's /proc has read-only and masked paths, as in a container", async () => {
    // A container runtime's default procMount: a user namespace that owned the sandbox's mount
    // namespace could not mount its /proc there (the kernel refuses a proc less visible than it).
    const script = `import { runSandboxed } from ${JSON.stringify(new URL("../src/sandbox/index.ts", import.meta.url).href)};
      const result = await runSandboxed({ command: "/bin/sh", args: ["-c", "unshare -U true || echo refused"], deadlineMs: 10000 });
      console.log(JSON.stringify([result.exitCode, result.stdout]));`;
    const { stdout } = await promisify(execFile)("unshare", [
      "--mount",
      "--propagation=private",
      "/bin/sh",
      "-c",
      'mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys && exec "$@"',
      "sh",
      process.execPath,
      ...process.execArgv,
      "--input-type=module",
      "-e",
      script,
    ]);
    expect(JSON.parse(stdout)).to.deep.equal([0, "refused\n"]);
  });

  it("stops a 10 GB file at the file-size limit", async () => {
    let size = -1;
    const result = await runScript(
      `const fs = require("fs"); const fd = fs.openSync("big", "w"); const chunk = Buffer.alloc(1 << 24, 120);
       for (let i = 0; i < 640; i++) fs.writeSync(fd, chunk); console.log("wrote 10 GB");`,
      {
        limits: { fileBytes: 32 * 1024 ** 2 },
        inspect: async (home) => {
          size = (await stat(join(home, "big"))).size;
        },
      },
    );
    // node ignores SIGXFSZ: the write past the limit fails with EFBIG instead.
    expect(result.stdout).not.to.include("wrote 10 GB");
    expect(result.stderr).to.include("EFBIG");
    expect(size).to.equal(32 * 1024 ** 2);
  });

  it("stops a memory balloon at its memory limit", async () => {
    const result = await runScript(
      `const kept = []; try { for (;;) kept.push(Buffer.alloc(64 << 20, 1)); } catch (e) { console.log("stopped at " + kept.length * 64 + " MiB"); }`,
      { limits: { dataBytes: 1024 ** 3 } },
    );
    const stopped = /stopped at (\d+) MiB/.exec(result.stdout);
    expect(stopped, result.stderr.slice(-300)).not.to.equal(null);
    expect(Number(stopped?.[1])).to.be.below(1024);
  });

  it("cannot read a key of the executor's session keyring: it has one of its own", async () => {
    // A container's processes share a session keyring (the runtime makes one), and setpriv and the
    // user namespace kept it: the command read every key in it, and added keys every other sandbox
    // read. Here an executor in a session keyring of its own (perl makes it, with a key) runs one.
    const numbers = { x64: { addKey: 248, keyctl: 250 }, arm64: { addKey: 217, keyctl: 219 } }[
      process.arch as "x64" | "arm64"
    ];
    const search = `my ($type, $name) = ("user", "testrun-sandbox-test"); my $id = syscall(${numbers.keyctl}, 10, -3, $type, $name, 0); print $id < 0 ? "$!" : "found"`;
    const script = `import { execFileSync } from "node:child_process";
      import { runSandboxed } from ${JSON.stringify(new URL("../src/sandbox/index.ts", import.meta.url).href)};
      const search = ${JSON.stringify(search)};
      const result = await runSandboxed({ command: "/usr/bin/perl", args: ["-e", search], deadlineMs: 10000 });
      console.log(JSON.stringify([execFileSync("perl", ["-e", search], { encoding: "utf8" }), result.stdout]));`;
    const { stdout } = await promisify(execFile)("perl", [
      "-e",
      `syscall(${numbers.keyctl}, 1, 0) >= 0 or die "$!";
      my ($type, $name, $value) = ("user", "testrun-sandbox-test", "${secret}");
      syscall(${numbers.addKey}, $type, $name, $value, length $value, -3) >= 0 or die "$!";
      exec { $ARGV[0] } @ARGV`,
      "--",
      process.execPath,
      ...process.execArgv,
      "--input-type=module",
      "-e",
      script,
    ]);
    // A plain child of that executor finds the key; the sandboxed command does not.
    expect(JSON.parse(stdout)).to.deep.equal(["found", "Required key not available"]);
  });

  it("holds at most tmpfsInodes files in its folder and in /tmp", async () => {
    // Empty files take no bytes: before, a million fit in its folder (three million could), which
    // the copy back wrote to the executor's disk. Each folder filled until refused, then emptied.
    const result = await runScript(
      `const fs = require("node:fs");
      for (const dir of [".", "/tmp"]) {
        fs.mkdirSync(dir + "/many"); let made = 0, code;
        try { for (;;) { fs.writeFileSync(dir + "/many/" + made, ""); made++; } } catch (e) { code = e.code; }
        console.log(made + " " + code);
        fs.rmSync(dir + "/many", { recursive: true });
      }`,
    );
    // A few of each tmpfs's inodes are taken already: its root, the folder made in it.
    const files = result.stdout.trim().split("\n");
    expect(files, result.stderr).to.have.length(2);
    for (const line of files) {
      const [made, code] = line.split(" ");
      expect(code).to.equal("ENOSPC");
      expect(Number(made)).to.be.within(tmpfsInodes - 16, tmpfsInodes);
    }
  });

  it("copies its folder back as it left it, never through the executor's symbolic links there", async () => {
    // The executor's folder links to a package (as a spec's links @playwright/test) and to a file;
    // the command makes the first a directory with a file of its own, and the second a file.
    const outside = await mkdtemp(join(tmpdir(), "testrun-sandbox-outside-"));
    const workDir = await mkdtemp(join(tmpdir(), "testrun-sandbox-work-"));
    try {
      await mkdir(join(outside, "package"));
      await writeFile(join(outside, "package", "index.js"), "the package");
      await writeFile(join(outside, "file"), "the executor's file");
      await mkdir(join(workDir, "node_modules"));
      await symlink(join(outside, "package"), join(workDir, "node_modules", "package"));
      await symlink(join(outside, "file"), join(workDir, "link"));
      const result = await sandboxed({
        command: "/bin/sh",
        args: [
          "-c",
          "rm node_modules/package link && mkdir node_modules/package && echo mine > node_modules/package/index.js && echo mine > link",
        ],
        workDir,
        deadlineMs: 20_000,
      });
      expect(result.exitCode, result.stderr).to.equal(0);
      expect(await readFile(join(outside, "package", "index.js"), "utf8")).to.equal("the package");
      expect(await readFile(join(outside, "file"), "utf8")).to.equal("the executor's file");
      expect((await lstat(join(workDir, "link"))).isFile()).to.equal(true);
      expect(await readFile(join(workDir, "node_modules", "package", "index.js"), "utf8")).to.equal("mine\n");
    } finally {
      await rm(outside, { recursive: true, force: true });
      await rm(workDir, { recursive: true, force: true });
    }
  });

  it("leaves nothing running after the command ends (a detached sleep included)", async () => {
    const result = await sandboxed({
      command: "/bin/sh",
      args: ["-c", "setsid sleep 1000 >/dev/null 2>&1 & sleep 1000 >/dev/null 2>&1 & echo started"],
      deadlineMs: 10_000,
    });
    expect(result.stdout).to.equal("started\n");
    expect(result.exitCode).to.equal(0);
    // afterEach: no process of the sandbox's uid is left on the host.
  });

  it("kills a spinning command and its children at the deadline and says so", async () => {
    const started = performance.now();
    const result = await runScript(
      `require("child_process").spawn(process.execPath, ["-e", "for (;;) {}"], { detached: true, stdio: "ignore" }); for (;;) {}`,
      { deadlineMs: 1_000 },
    );
    expect(result.timedOut).to.equal(true);
    expect(result.exitCode).to.equal(null);
    expect(performance.now() - started).to.be.below(3_000);
  });

  it("keeps at most outputBytes of its output", async () => {
    const result = await runScript(`process.stdout.write("x".repeat(1 << 20))`, {
      limits: { outputBytes: 1000 },
    });
    expect(result.stdout).to.equal("x".repeat(1000));
    expect(result.limitHit).to.equal("output");
  });

  it("starts quickly (the overhead over running the command directly, printed)", async () => {
    const times = async (run: () => Promise<unknown>) => {
      const took: number[] = [];
      for (let i = 0; i < 5; i++) {
        const start = performance.now();
        await run();
        took.push(performance.now() - start);
      }
      return took.sort((a, b) => a - b)[2] ?? 0;
    };
    const direct = await times(() => promisify(execFile)(node, ["-e", ""]));
    const sandboxed = await times(() => runScript(""));
    console.log(
      `      sandbox start-up: node -e '' took ${direct.toFixed(0)} ms directly, ${sandboxed.toFixed(0)} ms sandboxed (median of 5)`,
    );
    expect(sandboxed - direct).to.be.below(1_000);
  });
});
