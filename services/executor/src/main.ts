// The executor pods' process: takes tests from the queue and runs them (executor.ts). It serves
// gRPC health and reflection only, so probes and the chart treat it like every other service.
import { hostname } from "node:os";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { baseConfigSchema, portVar, redisUrl, runService, serviceClient, serviceUrl } from "@testrun/kit";
import { z } from "zod";
import { Executor } from "./executor.js";
import { TestQueue } from "./queue.js";

await runService({
  name: "executor",
  config: baseConfigSchema.extend({
    PORT: portVar(7105),
    REDIS_URL: redisUrl,
    /** The executor identity: the runs service and GetVariableValues accept only this token. */
    EXECUTOR_TOKEN: z.string().min(32, "must be at least 32 characters"),
    RUNS_URL: serviceUrl.default("http://127.0.0.1:7104"),
    CATALOG_URL: serviceUrl.default("http://127.0.0.1:7102"),
    /** Tests this process runs at the same time. */
    CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
    /**
     * The runs service's lease (its default: 30 s). Heartbeats go every third of it; queue entries
     * unacknowledged for longer are taken over from their (presumably dead) executor.
     */
    LEASE_MS: z.coerce.number().int().min(300).default(30_000),
    /** How long the pre-run check of an environment's base URL waits for any answer. */
    REACHABILITY_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
    /** This process's name in the consumer group and in claims: the pod name in Kubernetes. */
    EXECUTOR_NAME: z.string().min(1).max(150).default(hostname()),
  }),
  redis: true,
  setup: async ({ config, logger, redis, onShutdown }) => {
    // A consumer per process (not per pod name): after a restart, what the previous process left
    // unacknowledged is taken over like any dead executor's work.
    const name = `${config.EXECUTOR_NAME}-${process.pid}`;
    const reader = redis.duplicate();
    await reader.connect();
    const queue = new TestQueue(reader, redis, name);
    await queue.ensureGroup();
    const executor = new Executor({
      queue,
      runs: serviceClient(RunsService, config.RUNS_URL, { token: config.EXECUTOR_TOKEN }),
      catalog: serviceClient(CatalogService, config.CATALOG_URL, { token: config.EXECUTOR_TOKEN }),
      logger,
      name,
      concurrency: config.CONCURRENCY,
      leaseMs: config.LEASE_MS,
      reachabilityTimeoutMs: config.REACHABILITY_TIMEOUT_MS,
    });
    executor.start();
    logger.info({ concurrency: config.CONCURRENCY, consumer: name }, "executor started");
    onShutdown(async () => {
      await executor.stop(config.SHUTDOWN_TIMEOUT_MS);
    });
    return [];
  },
});
