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
import { artifactContents } from "./artifacts/contents.js";
import { ArtifactSweeper } from "./artifacts/sweeper.js";
import { configSchema } from "./config.js";
import { Credits } from "./credits.js";
import { database } from "./db/index.js";
import { Dispatcher } from "./dispatcher.js";
import { registerQueueGauges } from "./metrics.js";
import { Reconciler } from "./reconciler.js";
import { Links } from "./render.js";
import { RunEvents } from "./run-events.js";
import { executorMethods, runsService } from "./service.js";
import { ArtifactStore } from "./store/artifacts.js";
import { CancelStore } from "./store/cancel.js";
import { LeaseStore } from "./store/leases.js";
import { PublicationStore } from "./store/publications.js";
import { RunReads } from "./store/reads.js";
import { ReconcileStore } from "./store/reconcile.js";
import { RefundStore } from "./store/refunds.js";
import { StartStore } from "./store/starts.js";
import { RunWatches } from "./watch.js";

/** PutArtifact's fields beside the content: ids, a lease token, a name of 100 characters, framing. */
const putArtifactOverheadBytes = 64 * 1024;

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
    registerQueueGauges({
      orm,
      redis,
      logger,
      dispatchDeadlineMs: config.DISPATCH_DEADLINE_MS,
      openWatchStreams: () => watches.openStreams,
    });
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
    const contents = artifactContents(config, orm);
    const artifacts = new ArtifactStore(orm, {
      runMaxBytes: config.RUN_ARTIFACTS_MAX_BYTES,
      testMaxCount: config.TEST_ARTIFACTS_MAX_COUNT,
      retentionDays: config.ARTIFACT_RETENTION_DAYS,
    });
    const sweeper = new ArtifactSweeper(artifacts, contents, config.ARTIFACT_SWEEP_INTERVAL_MS, logger);
    sweeper.start();
    onShutdown(() => contents.close(), "closing the artifact store");
    onShutdown(() => sweeper.stop(), "stopping the artifact sweeper");
    logger.info({ store: contents.backend }, "artifact store");
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
      artifacts,
      contents,
      sweeper,
      artifactMaxBytes: config.ARTIFACT_MAX_BYTES,
    });
    // PutArtifact carries an artifact of up to ARTIFACT_MAX_BYTES, with room for the request's
    // other fields; every other method keeps the services' bound.
    return [
      {
        ...bind(RunsService, impl, executorMethods),
        readMaxBytes: { PutArtifact: config.ARTIFACT_MAX_BYTES + putArtifactOverheadBytes },
      },
    ];
  },
});
