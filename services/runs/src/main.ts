import { setTimeout as delay } from "node:timers/promises";
import { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  AccessCache,
  bind,
  defaultStreamsPerConnection,
  runService,
  serviceClient,
  VariablesGrants,
} from "@testrun/kit";
import { configSchema } from "./config.js";
import { Credits } from "./credits.js";
import { database } from "./db/index.js";
import { Dispatcher } from "./dispatcher.js";
import { Reconciler } from "./reconciler.js";
import { Links } from "./render.js";
import { RunEvents } from "./run-events.js";
import { executorMethods, runsService } from "./service.js";
import { CancelStore } from "./store/cancel.js";
import { LeaseStore } from "./store/leases.js";
import { PublicationStore } from "./store/publications.js";
import { RunReads } from "./store/reads.js";
import { ReconcileStore } from "./store/reconcile.js";
import { RefundStore } from "./store/refunds.js";
import { StartStore } from "./store/starts.js";
import { RunWatches } from "./watch.js";

await runService({
  name: "runs",
  config: configSchema,
  database,
  redis: "auto-pipelined",
  // A gateway or console replica holds its WatchRun streams on one connection (connect-node keeps
  // one per service): room for every stream this replica serves, and the unary calls beside them.
  streamsPerConnection: (config) => config.WATCH_MAX_STREAMS + defaultStreamsPerConnection,
  setup: ({ config, orm, redis, logger, onShutdown, onStopping }) => {
    const client = { token: config.SERVICE_TOKEN };
    const catalog = serviceClient(CatalogService, config.CATALOG_URL, client);
    const billing = serviceClient(BillingService, config.BILLING_URL, client);
    const starts = new StartStore(orm);
    const credits = new Credits(starts, new RefundStore(orm), billing, logger);
    const dispatcher = new Dispatcher(redis, new PublicationStore(orm), logger);
    const events = new RunEvents(redis, logger);
    const access = new AccessCache(catalog, redis, logger, { ttlMs: config.ACCESS_CACHE_MS });
    const reads = new RunReads(orm);
    const links = new Links(config.APP_URL);
    const watches = new RunWatches(
      events,
      reads,
      links,
      {
        refreshMs: config.WATCH_REFRESH_MS,
        readSpacingMs: config.WATCH_READ_SPACING_MS,
        maxStreams: config.WATCH_MAX_STREAMS,
      },
      logger,
    );
    // Open streams end once the drain is over (callers call again, elsewhere), rather than holding
    // the shutdown until SHUTDOWN_TIMEOUT_MS cuts them off.
    onStopping(async () => {
      await delay(config.SHUTDOWN_DRAIN_MS);
      watches.close();
    });
    onShutdown(() => events.close(), "closing the run events subscriber");
    const reconciler = new Reconciler(
      new ReconcileStore(orm, config.MAX_ATTEMPTS),
      credits,
      dispatcher,
      events,
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
    onShutdown(() => reconciler.stop(), "stopping the reconciler");
    const impl = runsService({
      starts,
      reads,
      leases: new LeaseStore(orm, {
        leaseMs: config.LEASE_MS,
        maxAttempts: config.MAX_ATTEMPTS,
        maxRunningPerProject: config.MAX_RUNNING_PER_PROJECT,
      }),
      cancels: new CancelStore(orm),
      events,
      watches,
      catalog,
      access,
      billing,
      credits,
      dispatcher,
      links,
      logger,
      maxAttempts: config.MAX_ATTEMPTS,
      variablesGrants: new VariablesGrants(config.SERVICE_TOKEN),
    });
    return [bind(RunsService, impl, executorMethods)];
  },
});
