import { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { defaultStreamsPerConnection, runService, serviceClient } from "@testrun/kit";
import { configSchema } from "./config.js";
import { database } from "./db/index.js";
import { registerQueueGauges } from "./metrics.js";
import { wireRuns } from "./wiring.js";

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
    const runs = wireRuns({
      config,
      orm,
      redis,
      logger,
      catalog: serviceClient(CatalogService, config.CATALOG_URL, client),
      billing: serviceClient(BillingService, config.BILLING_URL, client),
    });
    onStopping(() => runs.stopping());
    // Before Redis and the database close (clean-up steps run last registered, first).
    onShutdown(
      () => runs.stop(),
      "stopping the artifact sweeper and the reconciler, closing the artifact store and the run events",
    );
    // The queue gauges are the process's own (one Prometheus registry), so registered here, not in
    // the wiring that tests build more than once.
    registerQueueGauges({
      orm,
      redis,
      logger,
      dispatchDeadlineMs: config.DISPATCH_DEADLINE_MS,
      openWatchStreams: runs.openWatchStreams,
    });
    return runs.services;
  },
});
