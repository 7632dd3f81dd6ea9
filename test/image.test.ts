// The container image, replayed: no container engine runs here, so deploy/Dockerfile is read and
// its stages are laid out in a temporary folder (test/dockerfile-replay.ts), and every service is
// started from there exactly as the image's ENTRYPOINT and a pod's `args` start it.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { chmod, lstat, mkdtemp, readdir, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@testrun/gen/grpc/health/v1/health_pb";
import {
  componentRedisUrl,
  createRedisUsers,
  createTestDatabase,
  findFreePort,
  type LaunchCommand,
  repoRoot,
  type ServiceProcess,
  startServiceProcess,
  startThrowawayRedis,
  type ThrowawayServer,
  testrunCache,
} from "@testrun/testing";
import { expect } from "chai";
import { redisUsers, services } from "../scripts/services.js";
import { systemServices } from "../scripts/system.js";
import { type ImageReplay, parseDockerfile, replayTargets } from "./dockerfile-replay.js";

const runtimeBase = "gcr.io/distroless/nodejs24-debian12:nonroot";
/** The browser image's base (--target browser) and the Debian packages it adds. */
const browserBase = "node:24-bookworm-slim";
const browserPackages = [
  "chromium",
  "fonts-liberation",
  "fonts-noto-core",
  "fonts-noto-color-emoji",
  "iproute2",
];
/** Where the runtime base image has node. */
const imageNode = "/nodejs/bin/node";
/** Dev dependencies that would show a dev install leaked into the image. */
const telltaleDevPackages = [
  "tsx",
  "typescript",
  "mocha",
  "chai",
  "@biomejs/biome",
  "@bufbuild/buf",
  "@types/mocha",
];

describe("the container image (deploy/Dockerfile, replayed without a container engine)", () => {
  let scratch: string;
  let image: ImageReplay;
  /** The browser image: `docker build --target browser`. */
  let browserImage: ImageReplay;
  /** The packages the image holds: every workspace package but those for development only. */
  let workspacePackages: string[];
  /** Workspace packages with devDependencies only (the tests' harnesses): never in the image. */
  let devOnlyPackages: string[];
  /** Packages with a web app (services/<pkg>/web/vite.config.*): the image holds its web-build/. */
  let webPackages: string[];

  before(async function () {
    // A production build and a production-only `npm ci`: tens of seconds on a cold machine.
    this.timeout(300_000);
    scratch = await mkdtemp(join(tmpdir(), "testrun-image-"));
    // The image's user must be able to enter the folder, as it can /app.
    await chmod(scratch, 0o755);
    const stages = parseDockerfile(await readFile(join(repoRoot, "deploy/Dockerfile"), "utf8"));
    const finalStage = stages.at(-1)?.name ?? "";
    const images = await replayTargets(
      stages,
      {
        context: repoRoot,
        scratch,
        npmCiExtraArgs: ["--prefer-offline"],
        runCache: testrunCache("image-replay"),
      },
      [finalStage, "browser"],
    );
    image = images.get(finalStage) as ImageReplay;
    browserImage = images.get("browser") as ImageReplay;
    const allPackages = (await readdir(join(repoRoot, "services"), { withFileTypes: true }))
      .filter(
        (entry) => entry.isDirectory() && existsSync(join(repoRoot, "services", entry.name, "package.json")),
      )
      .map((entry) => entry.name)
      .sort();
    devOnlyPackages = [];
    for (const pkg of allPackages) {
      const manifest = JSON.parse(
        await readFile(join(repoRoot, "services", pkg, "package.json"), "utf8"),
      ) as {
        dependencies?: object;
        devDependencies?: object;
      };
      if (!manifest.dependencies && manifest.devDependencies) devOnlyPackages.push(pkg);
    }
    workspacePackages = allPackages.filter((pkg) => !devOnlyPackages.includes(pkg));
    webPackages = workspacePackages.filter((pkg) =>
      ["ts", "mjs", "js"].some((ext) =>
        existsSync(join(repoRoot, "services", pkg, `web/vite.config.${ext}`)),
      ),
    );
  });
  after(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  /** The image's ENTRYPOINT with `args` after it, on this machine: node is ours, /app is the replay. */
  const launch = (containerArgs: readonly string[]): LaunchCommand => {
    const onHost = (word: string) =>
      word.startsWith(`${image.workdir}/`) ? join(image.root, word.slice(image.workdir.length + 1)) : word;
    const [node, ...args] = image.entrypoint;
    expect(node, "the ENTRYPOINT's program").to.equal(imageNode);
    const [uid, gid] = (image.user ?? "").split(":").map(Number);
    // Run as the image's user when this process may switch user, so nothing can write to /app.
    const asImageUser = process.getuid?.() === 0 && image.user !== undefined;
    return {
      file: process.execPath,
      args: [...args.map(onHost), ...containerArgs],
      cwd: image.root,
      ...(asImageUser && { uid, gid: gid ?? uid }),
    };
  };
  /** The environment a container of an image (the default one unless given) starts with, plus the service's own. */
  const containerEnv = (env: Record<string, string>, of: ImageReplay = image) => ({
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: "/home/nonroot",
    ...of.env,
    ...env,
  });

  /** Runs the image with these args to completion. */
  async function runImage(args: string[], env: Record<string, string> = {}) {
    const command = launch(args);
    const child = spawn(command.file, command.args, {
      cwd: command.cwd,
      env: containerEnv(env),
      stdio: ["ignore", "pipe", "pipe"],
      ...(command.uid !== undefined && { uid: command.uid, gid: command.gid }),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    // "close", not "exit": all of the output has arrived.
    const [code] = await once(child, "close");
    return { code: code as number | null, stdout, stderr };
  }

  it("is distroless Node 24 as user 65532, with an exec-form ENTRYPOINT of node and the launcher", () => {
    expect(image.base).to.equal(runtimeBase);
    expect(image.user).to.equal("65532:65532");
    expect(image.workdir).to.equal("/app");
    expect(image.entrypoint).to.deep.equal([imageNode, "/app/services/kit/dist/launch.js"]);
    // The replay runs the image's Node major version.
    expect(process.versions.node.split(".")[0], "this test's Node").to.equal("24");
  });

  it("holds the manifests, compiled JavaScript and production dependencies, nothing else", async () => {
    expect((await readdir(image.root)).sort()).to.deep.equal([
      "node_modules",
      "package-lock.json",
      "package.json",
      "services",
    ]);
    expect((await readdir(join(image.root, "services"))).sort(), "packages").to.deep.equal(workspacePackages);
    for (const pkg of workspacePackages) {
      expect((await readdir(join(image.root, "services", pkg))).sort(), pkg).to.deep.equal([
        "dist",
        "package.json",
        ...(webPackages.includes(pkg) ? ["web-build"] : []),
      ]);
    }
    for (const pkg of webPackages) {
      expect(
        existsSync(join(image.root, "services", pkg, "web-build/index.html")),
        `${pkg} web app`,
      ).to.equal(true);
    }
    const files = await listFiles(join(image.root, "services"));
    const sources = files.filter((file) => /\.(ts|tsx|mts)$/.test(file) && !file.endsWith(".d.ts"));
    expect(sources, "TypeScript sources").to.deep.equal([]);
    expect(
      files.filter((file) => /(^|\/)test\/|\.test\.js$/.test(file)),
      "tests",
    ).to.deep.equal([]);
    // No test harness: neither the tests' package nor a testing module left in a production one.
    expect(
      files.filter((file) => /(^|\/)testing(\/|\.|$)/.test(file)),
      "testing files",
    ).to.deep.equal([]);
    for (const pkg of services.filter((service) => service.migrates).map((service) => service.name)) {
      const migrations = files.filter((file) => file.startsWith(`${pkg}/dist/db/migrations/Migration`));
      expect(
        migrations.filter((file) => file.endsWith(".js")),
        `${pkg} migrations`,
      ).not.to.be.empty;
    }
  });

  it("holds no package for development only: the tests' harnesses (@testrun/testing) stay out", async () => {
    expect(devOnlyPackages, "workspace packages with devDependencies only").to.include("testing");
    for (const pkg of devOnlyPackages) {
      const name = `@testrun/${pkg}`;
      expect(existsSync(join(image.root, "services", pkg)), `services/${pkg}`).to.equal(false);
      // lstat: a link left to a folder the image lacks counts too.
      const linked = await lstat(join(image.root, "node_modules", name)).then(
        () => true,
        () => false,
      );
      expect(linked, `node_modules/${name}`).to.equal(false);
    }
    // Every @testrun/* module the image installs is a package it holds.
    const installed = (await readdir(join(image.root, "node_modules/@testrun"))).sort();
    const shipped = await Promise.all(
      workspacePackages.map(async (pkg) => {
        const manifest = JSON.parse(
          await readFile(join(image.root, "services", pkg, "package.json"), "utf8"),
        );
        return String(manifest.name).replace(/^@testrun\//, "");
      }),
    );
    expect(installed).to.deep.equal(shipped.sort());
  });

  it("has no package the lockfile marks as a dev dependency", async () => {
    const lock = JSON.parse(await readFile(join(repoRoot, "package-lock.json"), "utf8")) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const devOnly = Object.entries(lock.packages)
      .filter(([path, entry]) => entry.dev && path.includes("node_modules/"))
      .map(([path]) => path);
    for (const name of telltaleDevPackages) {
      expect(devOnly, "dev dependencies in the lockfile").to.include(`node_modules/${name}`);
      expect(existsSync(join(repoRoot, "node_modules", name)), `${name} in the working copy`).to.equal(true);
    }
    expect(devOnly.filter((path) => existsSync(join(image.root, path)))).to.deep.equal([]);
  });

  it("resolves every workspace package's exports to built files, without the source condition", async () => {
    const specifiers = [
      "@testrun/kit",
      "@testrun/kit/egress",
      "@testrun/cli",
      "@testrun/gen/grpc/health/v1/health_pb",
    ];
    // And the tests' harnesses are not there to resolve.
    const script = `for (const s of ${JSON.stringify(specifiers)}) console.log(import.meta.resolve(s)), await import(s);
      await import("@testrun/testing").then(() => { throw new Error("@testrun/testing resolved in the image"); }, (error) => { if (error.code !== "ERR_MODULE_NOT_FOUND") throw error; });`;
    const child = spawn(process.execPath, ["--input-type=module", "--eval", script], {
      cwd: image.root,
      env: containerEnv({}),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    // "close", not "exit": all of the output has arrived.
    const [code] = await once(child, "close");
    expect(code, output).to.equal(0);
    const resolved = output.trim().split("\n");
    expect(resolved).to.have.length(specifiers.length);
    for (const url of resolved) {
      const file = await realpath(new URL(url));
      expect(relative(await realpath(image.root), file)).to.match(/^services\/[a-z]+\/dist\/.+\.js$/);
    }
  });

  it("names no service or package: every package under services/ is built and copied", async () => {
    const dockerfile = (await readFile(join(repoRoot, "deploy/Dockerfile"), "utf8"))
      .split("\n")
      .filter((line) => !line.trim().startsWith("#"));
    const named = (pattern: RegExp) =>
      dockerfile.filter((line) => !line.startsWith("ENTRYPOINT") && pattern.test(line));
    for (const name of services.map((service) => service.name)) {
      expect(named(new RegExp(`\\b${name}\\b`)), `deploy/Dockerfile names the service ${name}`).to.deep.equal(
        [],
      );
    }
    for (const pkg of workspacePackages) {
      expect(
        named(new RegExp(`services/${pkg}\\b`)),
        `deploy/Dockerfile names the package ${pkg}`,
      ).to.deep.equal([]);
    }
    // The web apps are built in the build stage and reach the runtime.
    expect(dockerfile.some((line) => /^RUN node deploy\/image-layout\.mjs web$/.test(line.trim()))).to.equal(
      true,
    );
  });

  it("refuses an unknown service, naming the services it runs", async () => {
    const { code, stderr } = await runImage(["no-such-service"]);
    expect(code).to.equal(2);
    expect(stderr).to.contain('unknown service "no-such-service"');
    const listed = /^services: (.*)$/m.exec(stderr)?.[1]?.split(", ");
    expect(listed?.sort(), "the launcher's services").to.deep.equal(systemServices.map((s) => s.name).sort());
  });

  describe("the browser image (--target browser)", () => {
    it("is Node 24 on Debian 12 with Debian's chromium and fonts, the default image's /app, as user 65532", async () => {
      expect(browserImage.base).to.equal(browserBase);
      expect(browserImage.packages).to.deep.equal(browserPackages);
      expect(browserImage.user).to.equal("65532:65532");
      expect(browserImage.workdir).to.equal("/app");
      expect(browserImage.entrypoint).to.deep.equal([
        "/usr/local/bin/node",
        "/app/services/kit/dist/launch.js",
      ]);
      expect(browserImage.env).to.deep.equal({ ...image.env, HOME: "/tmp" });
      // The same files as the default image's /app; and the default image installs nothing.
      expect(await listFiles(browserImage.root)).to.deep.equal(await listFiles(image.root));
      expect(image.packages, "packages of the default image").to.deep.equal([]);
    });

    it("runs the executor's playwright-core from /app with the image's chromium as user 65532: Arial pages in Liberation Sans, emoji and Devanagari in Noto", async function () {
      this.timeout(60_000);
      // Each element's text as chromium renders it: the platform font it used (DevTools' CSS domain).
      const script = `
        import { chromium } from "playwright-core";
        const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
        const page = await browser.newPage();
        await page.setContent('<p id="arial" style="font-family: Arial">Sign in</p><p id="emoji">😀</p><p id="devanagari">नमस्ते</p>');
        const cdp = await page.context().newCDPSession(page);
        await cdp.send("DOM.enable");
        await cdp.send("CSS.enable");
        const { root } = await cdp.send("DOM.getDocument");
        const used = {};
        for (const id of ["arial", "emoji", "devanagari"]) {
          const { nodeId } = await cdp.send("DOM.querySelector", { nodeId: root.nodeId, selector: "#" + id });
          const { fonts } = await cdp.send("CSS.getPlatformFontsForNode", { nodeId });
          used[id] = fonts.map((font) => font.familyName);
        }
        await browser.close();
        console.log(JSON.stringify(used));`;
      const [uid, gid] = (browserImage.user ?? "").split(":").map(Number);
      const asImageUser = process.getuid?.() === 0;
      const child = spawn(process.execPath, ["--input-type=module", "--eval", script], {
        cwd: browserImage.root,
        env: containerEnv({}, browserImage),
        stdio: ["ignore", "pipe", "pipe"],
        ...(asImageUser && { uid, gid }),
      });
      let output = "";
      child.stdout.on("data", (chunk) => (output += chunk));
      child.stderr.on("data", (chunk) => (output += chunk));
      const [code] = await once(child, "close");
      expect(code, output).to.equal(0);
      expect(JSON.parse(output.trim().split("\n").at(-1) ?? "{}")).to.deep.equal({
        arial: ["Liberation Sans"],
        emoji: ["Noto Color Emoji"],
        devanagari: ["Noto Sans Devanagari"],
      });
    });
  });

  it("runs testrunctl", async () => {
    const { code, stdout } = await runImage(["testrunctl", "--help"]);
    expect(code).to.equal(0);
    expect(stdout).to.contain("Usage: testrunctl");
  });

  describe("running the system", () => {
    let redis: ThrowawayServer;
    let env: Record<string, string>;
    const ports = new Map<string, number>();
    /** HTTP_PORT of each service that serves HTTP (the registry's httpPort). */
    const httpPorts = new Map<string, number>();
    const running = new Map<string, ServiceProcess>();

    before(async () => {
      // A Redis of its own: this executor must not take other suites' tests off a shared stream.
      redis = await startThrowawayRedis();
      await createRedisUsers(redis.url, redisUsers);
      for (const service of systemServices) {
        ports.set(service.name, await findFreePort());
        if (service.httpPort) httpPorts.set(service.name, await findFreePort());
      }
      env = {
        DATABASE_URL: await createTestDatabase(String(process.env.DATABASE_URL)),
        REDIS_URL: redis.url,
        SERVICE_TOKEN: randomBytes(32).toString("base64url"),
        EXECUTOR_TOKEN: randomBytes(32).toString("base64url"),
        KEY_CACHE_SECRET: randomBytes(32).toString("base64url"),
        VARIABLES_KEY: randomBytes(32).toString("base64"),
        WEBHOOK_SECRETS_KEY: randomBytes(32).toString("base64"),
        ...Object.fromEntries(
          [...ports].map(([name, port]) => [`${name.toUpperCase()}_URL`, `http://127.0.0.1:${port}`]),
        ),
      };
    });
    after(async () => {
      await Promise.all([...running.values()].map((child) => child.stop("SIGKILL")));
      await redis?.stop();
    });

    for (const service of systemServices.filter((s) => s.database)) {
      it(`${service.name} migrate applies its migrations and exits 0; run again, it applies none`, async () => {
        const applied = async () => {
          const { code, stdout, stderr } = await runImage([service.name, "migrate"], env);
          expect(code, `${stdout}\n${stderr}`).to.equal(0);
          const line = stdout.split("\n").find((l) => l.includes('"msg":"migrations applied"'));
          return (JSON.parse(line ?? "{}") as { applied?: string[] }).applied;
        };
        expect(await applied(), "first run").to.be.an("array").that.is.not.empty;
        expect(await applied(), "second run").to.deep.equal([]);
      });
    }

    it("starts every service, each answering gRPC health SERVING", async function () {
      this.timeout(120_000);
      const started = await Promise.allSettled(
        systemServices.map(async (service) => {
          const child = await startServiceProcess(
            service.name,
            containerEnv({
              ...env,
              HOST: "127.0.0.1",
              PORT: String(ports.get(service.name)),
              ...(httpPorts.has(service.name) && { HTTP_PORT: String(httpPorts.get(service.name)) }),
              // Its own Redis user, as deployed.
              ...(service.redis && { REDIS_URL: componentRedisUrl(redis.url, service.name) }),
            }),
            { launch: launch([service.name]) },
          );
          running.set(service.name, child);
        }),
      );
      const failures = started.flatMap((result) =>
        result.status === "rejected" ? [String(result.reason)] : [],
      );
      expect(failures, "services that did not start").to.deep.equal([]);
      for (const service of systemServices) {
        // As Kubernetes' gRPC probe asks: no token, the whole process ("").
        const baseUrl = `http://127.0.0.1:${ports.get(service.name)}`;
        const { status } = await createClient(Health, createGrpcTransport({ baseUrl })).check({
          service: "",
        });
        expect(status, service.name).to.equal(Status.SERVING);
      }
    });

    it("every service with an HTTP port answers GET /healthz and /readyz with 200 on HTTP_PORT", async () => {
      expect([...httpPorts.keys()], "services with an HTTP port").to.include("gateway");
      for (const [name, port] of httpPorts) {
        for (const path of ["/healthz", "/readyz"]) {
          const response = await fetch(`http://127.0.0.1:${port}${path}`);
          expect(response.status, `${name} ${path}`).to.equal(200);
        }
      }
    });

    it("every service exits 0 on SIGTERM", async () => {
      const codes = await Promise.all(
        systemServices.map(async (service) => [
          service.name,
          await running.get(service.name)?.stop("SIGTERM"),
        ]),
      );
      expect(Object.fromEntries(codes)).to.deep.equal(
        Object.fromEntries(systemServices.map((service) => [service.name, 0])),
      );
    });
  });
});

/** Every file under a folder, relative to it, with / separators. */
async function listFiles(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join("/"));
}
