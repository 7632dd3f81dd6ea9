import { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { bind, runService, serviceClient, VariablesGrants } from "@testrun/kit";
import { configSchema } from "./config.js";
import { Credits } from "./credits.js";
import { database } from "./db/index.js";
import { Dispatcher } from "./dispatcher.js";
import { Reconciler } from "./reconciler.js";
import { Links } from "./render.js";
import { executorMethods, runsService } from "./service.js";
import { RunStore } from "./store.js";

await runService({
  name: "runs",
  config: configSchema,
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
      variablesGrants: new VariablesGrants(config.SERVICE_TOKEN),
    });
    return [bind(RunsService, impl, executorMethods)];
  },
});
