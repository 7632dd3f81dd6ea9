import { setTimeout as delay } from "node:timers/promises";
import type { Client } from "@connectrpc/connect";
import type { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { AccessCache, bind, type Logger, type Orm, type ServiceWiring, VariablesGrants } from "@testrun/kit";
import type { Redis } from "ioredis";
import { artifactContents } from "./artifacts/open-contents.js";
import { ArtifactSweeper } from "./artifacts/sweeper.js";
import type { Config } from "./config.js";
import { Credits } from "./credits.js";
import { Dispatcher } from "./dispatcher.js";
import { ExecutorKinds } from "./executor-kinds.js";
import { FailureStore } from "./failures/store.js";
import { HealthStore } from "./health/store.js";
import { Links } from "./links.js";
import { Reconciler } from "./reconciler.js";
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

export { configSchema } from "./config.js";
export { database } from "./db/index.js";

/** PutArtifact's fields beside the content: ids, a lease token, a name of 100 characters, framing. */
const putArtifactOverheadBytes = 64 * 1024;

/** What the runs service is made of: its configuration, database, Redis, log, and the services it calls. */
export interface RunsDependencies {
  config: Config;
  orm: Orm;
  redis: Redis;
  logger: Logger;
  /** Resolves selections and authorizes actors (CheckAccess, cached in Redis). */
  catalog: Client<typeof CatalogService>;
  /** Charges starts and refunds what did not run. */
  billing: Client<typeof BillingService>;
}

/** The runs service's wiring, and what main.ts needs beside it (the drain, the queue gauges). */
export interface RunsWiring extends ServiceWiring {
  /**
   * Once the service is told to stop: waits out SHUTDOWN_DRAIN_MS, then ends the open WatchRun
   * streams (callers call again, elsewhere), rather than holding the shutdown until
   * SHUTDOWN_TIMEOUT_MS cuts them off.
   */
  stopping(): Promise<void>;
  /** WatchRun streams open now (a gauge of the queue metrics). */
  openWatchStreams(): number;
}

/**
 * The runs service's wiring, for main.ts and tests alike: RunsService, and its background work
 * started here (the reconciler, the run events subscriber, the artifact sweeper; the dispatcher
 * publishes from the handlers and the reconciler). `stop` stops it, last started first.
 */
export function wireRuns({ config, orm, redis, logger, catalog, billing }: RunsDependencies): RunsWiring {
  const starts = new StartStore(orm);
  const credits = new Credits(starts, new RefundStore(orm), billing, logger);
  const dispatcher = new Dispatcher(redis, new PublicationStore(orm), logger);
  const events = new RunEvents(redis, logger);
  const access = new AccessCache(catalog, redis, logger, { ttlMs: config.ACCESS_CACHE_MS });
  const reads = new RunReads(orm);
  const links = new Links(config.APP_URL);
  // Refreshed by the reconciler at each pass.
  const kinds = new ExecutorKinds(redis, logger);
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
    kinds,
  );
  const health = new HealthStore(orm);
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
    kinds,
    health,
  );
  reconciler.start();
  const contents = artifactContents(config, orm);
  const artifacts = new ArtifactStore(orm, {
    runMaxBytes: config.RUN_ARTIFACTS_MAX_BYTES,
    testMaxCount: config.TEST_ARTIFACTS_MAX_COUNT,
    retentionDays: config.ARTIFACT_RETENTION_DAYS,
  });
  const sweeper = new ArtifactSweeper(artifacts, contents, config.ARTIFACT_SWEEP_INTERVAL_MS, logger);
  sweeper.start();
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
    kinds,
    health,
    failures: new FailureStore(orm),
  });
  return {
    // PutArtifact carries an artifact of up to ARTIFACT_MAX_BYTES, with room for the request's
    // other fields; every other method keeps the services' bound.
    services: [
      {
        ...bind(RunsService, impl, executorMethods),
        readMaxBytes: { PutArtifact: config.ARTIFACT_MAX_BYTES + putArtifactOverheadBytes },
      },
    ],
    async stopping() {
      await delay(config.SHUTDOWN_DRAIN_MS);
      watches.close();
    },
    openWatchStreams: () => watches.openStreams,
    async stop() {
      // Open WatchRun streams end first (`stopping` did so already when main.ts stops; tests stop
      // the wiring without it): each holds a refresh timer that would keep the process alive.
      watches.close();
      // Last started, first stopped; all of it before Redis and the database close.
      await step("stopping the artifact sweeper", () => sweeper.stop());
      await step("closing the artifact store", () => contents.close());
      await step("stopping the reconciler", () => reconciler.stop());
      await step("closing the run events subscriber", () => events.close());
    },
  };

  /** One step of `stop`: a failing one is logged, and the next still runs. */
  async function step(what: string, run: () => Promise<void> | void): Promise<void> {
    try {
      await run();
    } catch (err) {
      logger.warn({ err }, `${what} failed`);
    }
  }
}
