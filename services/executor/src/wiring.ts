import type { Client } from "@connectrpc/connect";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { type Logger, redisCommandTimeoutMs, type ServiceWiring, specCauses } from "@testrun/kit";
import { EgressGuard, EgressPolicy } from "@testrun/kit/egress";
import type { Redis } from "ioredis";
import { browserContextOptions, browserLaunchOptions } from "./browser/chromium-flags.js";
import { type EgressProxy, startEgressProxy } from "./browser/egress-proxy.js";
import { BrowserPool, baseChromiumArgs } from "./browser/pool.js";
import { BrowserProbe } from "./browser/probe.js";
import type { Config } from "./config.js";
import { Executor, type ExecutorOptions } from "./executor.js";
import { KindReporter, TestKinds } from "./kinds.js";
import { launchDirect, sandboxedLauncher } from "./playwright/launch.js";
import { playwrightPackages } from "./playwright/workspace.js";
import { TestQueue } from "./queue.js";
import { canMakeSandbox, runSandboxed, sandboxProxyPort } from "./sandbox/index.js";

export { configSchema } from "./config.js";

/** What an executor is made of: its configuration, Redis, log, and the runs service and catalog (executor token). */
export interface ExecutorDependencies {
  config: Config;
  redis: Redis;
  logger: Logger;
  /** Claims, leases and completes tests; takes artifacts. */
  runs: Client<typeof RunsService>;
  /** The test cases' steps and the variables granted to a claim. */
  catalog: Client<typeof CatalogService>;
  /** Its consumer name in the streams' group. */
  name: string;
}

export interface ExecutorWiring extends ServiceWiring {
  executor: Executor;
  browsers: BrowserPool;
  /** The kinds of test it takes now (gRPC health and the metrics report them: main.ts). */
  kinds: TestKinds;
  /**
   * Resolves once the first check of each kind that needs one is done (its browser launched, or
   * not): the kinds taken are known from then on.
   */
  checked: Promise<void>;
}

/**
 * An executor's wiring, for main.ts and tests alike: it serves no RPC; its work is reading the
 * test streams and running what it claims, started here, and checking that it can run the kinds it
 * is configured for (its browser launches: browser/probe.ts). `stop` takes no new tests, gives those
 * in flight SHUTDOWN_TIMEOUT_MS, then closes the browser, the egress proxy and the guard.
 */
export async function wireExecutor({
  config,
  redis,
  logger,
  runs,
  catalog,
  name,
}: ExecutorDependencies): Promise<ExecutorWiring> {
  // The reading connection waits up to readBlockMs on purpose: its commands may take that long more.
  const readBlockMs = 2_000;
  const reader = redis.duplicate({ commandTimeout: readBlockMs + redisCommandTimeoutMs });
  await reader.connect();
  const kinds = new TestKinds(config.EXECUTOR_STEP_KINDS, logger, ["browser", "spec"]);
  const queue = new TestQueue(reader, redis, name, kinds.configured, (kind) => kinds.takes(kind));
  await queue.ensureGroup();
  // Every connection to an environment (reachability check, steps) goes through this guard.
  const egress = new EgressGuard(
    new EgressPolicy({ allow: config.EGRESS_ALLOW_CIDRS, deny: config.EGRESS_DENY_CIDRS }),
    { clusterNames: { domain: config.EGRESS_CLUSTER_DOMAIN, allow: config.EGRESS_ALLOW_CLUSTER_NAMES } },
  );
  // Every page's traffic goes through this proxy, which connects through the same guard
  // (docs/runs.md, "Egress"): chromium itself resolves and reaches nothing.
  const proxy = await startEgressProxy(egress, { logger });
  const {
    proxy: proxySettings,
    executablePath,
    ...launchOptions
  } = browserLaunchOptions(proxy, config.CHROMIUM_PATH);
  // Its browsers, one project's each at a time, the first launched at start when it takes browser
  // tests (none for HTTP-only work), with chromium's sandbox unless BROWSER_SANDBOX=off.
  const browsers = new BrowserPool({
    executablePath: executablePath ?? config.CHROMIUM_PATH,
    contexts: config.BROWSER_CONTEXTS,
    browsers: config.BROWSER_PROCESSES ?? config.BROWSER_CONTEXTS,
    sandbox: {
      enabled: config.BROWSER_SANDBOX === "on",
      uid: config.BROWSER_UID,
      gid: config.BROWSER_GID,
    },
    logger,
    proxy: proxySettings,
    launchOptions,
    contextOptions: browserContextOptions(),
  });
  const executor = new Executor({
    queue,
    runs,
    catalog,
    logger,
    name,
    concurrency: config.CONCURRENCY,
    leaseMs: config.LEASE_MS,
    reachabilityTimeoutMs: config.REACHABILITY_TIMEOUT_MS,
    egress,
    responseMaxBytes: config.RESPONSE_MAX_BYTES,
    testDeadlineMs: config.TEST_DEADLINE_MS,
    readBlockMs,
    browsers,
    traceMaxBytes: config.BROWSER_TRACE_MAX_BYTES,
    kinds,
    browserUnavailable: (error) => probe.failed(error),
    // A Playwright spec's runner starts its own chromium: the pool's binary and flags, and the
    // egress proxy, reached from inside the sandbox through its forwarder (config.ts says why).
    ...(config.PLAYWRIGHT_SPECS !== "off" && {
      specs: specRunnerSettings(config.PLAYWRIGHT_SPECS, config.CHROMIUM_PATH, proxy),
    }),
  });
  if (config.PLAYWRIGHT_SPECS === "unsandboxed")
    logger.warn(
      "PLAYWRIGHT_SPECS=unsandboxed: Playwright specs run in a plain child process as the executor's user, not in the user-code sandbox; for one trusted team's installation only (docs/security.md)",
    );
  const probe = new BrowserProbe(browsers, kinds);
  const reporter = new KindReporter(runs, name, kinds, logger);
  executor.start();
  reporter.start();
  // HTTP tests are taken at once; browser tests once the browser launched; specs once a sandbox was made.
  const checked = Promise.all([
    kinds.configured.includes("browser") ? probe.start() : undefined,
    kinds.configured.includes("spec") ? checkSpecs(config.PLAYWRIGHT_SPECS, kinds) : undefined,
  ]).then(() => {});
  logger.info(
    {
      concurrency: config.CONCURRENCY,
      browserContexts: config.BROWSER_CONTEXTS,
      consumer: name,
      stepKinds: config.EXECUTOR_STEP_KINDS,
    },
    "executor started",
  );
  return {
    services: [],
    executor,
    browsers,
    kinds,
    checked,
    async stop() {
      // No new tests (the reader closes), then those in flight end or are interrupted.
      await executor.stop(config.SHUTDOWN_TIMEOUT_MS);
      probe.stop();
      await reporter.stop();
      await browsers.close();
      await proxy.close();
      await egress.close();
    },
  };
}

/**
 * Whether this executor can run Playwright specs, once at start: not when they are off, nor when
 * they run sandboxed and it cannot make the sandbox (it is not root, or the node refuses what the
 * sandbox needs: one trivial command tried in it says). Unsandboxed specs run anywhere.
 */
async function checkSpecs(mode: Config["PLAYWRIGHT_SPECS"], kinds: TestKinds): Promise<void> {
  if (mode === "off") return kinds.unavailable("spec", specCauses.off);
  if (mode === "unsandboxed") return kinds.available("spec");
  if (!canMakeSandbox()) return kinds.unavailable("spec", specCauses.noSandbox);
  try {
    const tried = await runSandboxed({ command: "/bin/true", deadlineMs: 30_000 });
    if (tried.exitCode !== 0)
      throw new Error(`/bin/true in the sandbox ended ${tried.signal ?? tried.exitCode}`);
    kinds.available("spec");
  } catch (error) {
    kinds.unavailable("spec", specCauses.sandboxFailed, error);
  }
}

/**
 * How this executor runs Playwright specs: in the user-code sandbox (its proxy at the forwarder's
 * port inside), or as a plain child process with the proxy where it listens.
 */
function specRunnerSettings(
  mode: "sandboxed" | "unsandboxed",
  chromiumPath: string,
  proxy: EgressProxy,
): NonNullable<ExecutorOptions["specs"]> {
  const sandboxed = mode === "sandboxed";
  const server = sandboxed ? `http://127.0.0.1:${sandboxProxyPort}` : proxy.server;
  const { proxy: settings, args } = browserLaunchOptions({ ...proxy, server }, chromiumPath);
  const { hostname, port } = new URL(proxy.server);
  return {
    chromiumPath,
    chromiumArgs: [...baseChromiumArgs, ...(args ?? [])],
    ...(settings && { proxy: settings }),
    launch: sandboxed
      ? sandboxedLauncher({ proxy: { host: hostname, port: Number(port) }, readOnly: [playwrightPackages] })
      : launchDirect,
  };
}
