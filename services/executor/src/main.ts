import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { redisCommandTimeoutMs, runService, serviceClient } from "@testrun/kit";
import { EgressGuard, EgressPolicy } from "@testrun/kit/egress";
import { browserContextOptions, browserLaunchOptions } from "./browser/chromium-flags.js";
import { startEgressProxy } from "./browser/egress-proxy.js";
import { BrowserPool } from "./browser/pool.js";
import { configSchema } from "./config.js";
import { Executor } from "./executor.js";
import { registerExecutorGauges } from "./metrics.js";
import { TestQueue } from "./queue.js";

await runService({
  name: "executor",
  config: configSchema,
  redis: true,
  setup: async ({ config, logger, redis, onStopping }) => {
    // A consumer per process (not per pod name): after a restart, what the previous process left
    // unacknowledged is taken over like any dead executor's work.
    const name = `${config.EXECUTOR_NAME}-${process.pid}`;
    // The reading connection waits up to readBlockMs on purpose: its commands may take that long more.
    const readBlockMs = 2_000;
    const reader = redis.duplicate({ commandTimeout: readBlockMs + redisCommandTimeoutMs });
    await reader.connect();
    const queue = new TestQueue(reader, redis, name, config.EXECUTOR_STEP_KINDS);
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
    // One Chromium for the process, launched at the first browser step (none for HTTP-only work).
    const browsers = new BrowserPool({
      executablePath: executablePath ?? config.CHROMIUM_PATH,
      contexts: config.BROWSER_CONTEXTS,
      logger,
      proxy: proxySettings,
      launchOptions,
      contextOptions: browserContextOptions(),
    });
    const executor = new Executor({
      queue,
      runs: serviceClient(RunsService, config.RUNS_URL, { token: config.EXECUTOR_TOKEN }),
      catalog: serviceClient(CatalogService, config.CATALOG_URL, { token: config.EXECUTOR_TOKEN }),
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
    });
    registerExecutorGauges({ slots: () => executor.slots, contexts: () => browsers.open });
    executor.start();
    logger.info(
      {
        concurrency: config.CONCURRENCY,
        browserContexts: config.BROWSER_CONTEXTS,
        consumer: name,
        stepKinds: config.EXECUTOR_STEP_KINDS,
      },
      "executor started",
    );
    // No new tests from SIGTERM on, drain or not; those in flight get SHUTDOWN_TIMEOUT_MS.
    onStopping(async () => {
      await executor.stop(config.SHUTDOWN_TIMEOUT_MS);
      await browsers.close();
      await proxy.close();
      await egress.close();
    });
    return [];
  },
});
