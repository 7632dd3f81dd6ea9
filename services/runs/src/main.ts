import { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  baseConfigSchema,
  bind,
  portVar,
  postgresUrl,
  redisUrl,
  runService,
  serviceClient,
  serviceUrl,
} from "@testrun/kit";
import { z } from "zod";
import { Credits } from "./credits.js";
import { database } from "./db/index.js";
import { Dispatcher } from "./dispatcher.js";
import { Reconciler } from "./reconciler.js";
import { Links } from "./render.js";
import { executorMethods, runsService } from "./service.js";
import { RunStore } from "./store.js";

const ms = (defaultMs: number) => z.coerce.number().int().positive().default(defaultMs);

await runService({
  name: "runs",
  config: baseConfigSchema.extend({
    PORT: portVar(7104),
    DATABASE_URL: postgresUrl,
    REDIS_URL: redisUrl,
    CATALOG_URL: serviceUrl.default("http://127.0.0.1:7102"),
    BILLING_URL: serviceUrl.default("http://127.0.0.1:7103"),
    /** The web application's address, for run and test links. */
    APP_URL: z.url().default("http://localhost:3000"),
    /** How long a claim lasts without a heartbeat. */
    LEASE_MS: ms(30_000),
    /** Lapsed leases after which a test is FAILED. */
    MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(3),
    RECONCILE_INTERVAL_MS: ms(5_000),
    /** A start still unconfirmed after this long is treated as crashed: refunded and removed. */
    START_GRACE_MS: ms(60_000),
    /** An unclaimed QUEUED test is published again after this long (then twice as long, …). */
    REPUBLISH_AFTER_MS: ms(60_000),
    /** A test QUEUED this long (or a lapsed lease untaken this long) is given up. */
    DISPATCH_DEADLINE_MS: ms(15 * 60_000),
  }),
  database,
  redis: true,
  setup: ({ config, orm, redis, logger, onShutdown }) => {
    const client = { token: config.SERVICE_TOKEN };
    const catalog = serviceClient(CatalogService, config.CATALOG_URL, client);
    const billing = serviceClient(BillingService, config.BILLING_URL, client);
    const store = new RunStore(orm, { leaseMs: config.LEASE_MS, maxAttempts: config.MAX_ATTEMPTS });
    const credits = new Credits(store, billing, logger);
    const dispatcher = new Dispatcher(redis, store, logger);
    const reconciler = new Reconciler(
      store,
      credits,
      dispatcher,
      {
        intervalMs: config.RECONCILE_INTERVAL_MS,
        startGraceMs: config.START_GRACE_MS,
        republishMs: config.REPUBLISH_AFTER_MS,
        dispatchDeadlineMs: config.DISPATCH_DEADLINE_MS,
      },
      logger,
    );
    reconciler.start();
    // Registered last, so it stops first: before Redis and the database close.
    onShutdown(() => reconciler.stop());
    const impl = runsService({
      store,
      catalog,
      billing,
      credits,
      dispatcher,
      links: new Links(config.APP_URL),
      logger,
      maxAttempts: config.MAX_ATTEMPTS,
    });
    return [bind(RunsService, impl, executorMethods)];
  },
});
