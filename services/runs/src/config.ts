import { baseConfigSchema, portVar, postgresUrl, redisUrl, serviceUrl } from "@testrun/kit";
import { z } from "zod";

const ms = (defaultMs: number) => z.coerce.number().int().positive().default(defaultMs);

/** The runs service's environment. The Helm chart sets every variable without a default (test/chart.test.ts checks). */
export const configSchema = baseConfigSchema.extend({
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
  /**
   * A project's share of the executors' slots: ClaimTest refuses (RESOURCE_EXHAUSTED) a project's
   * queued test while the project holds this many live leases and another project's tests wait with
   * fewer. Work-conserving: alone, a project uses every slot. 0 turns the limit off. Set it to a
   * share of the executors' replicas × CONCURRENCY (the runs service does not count them).
   */
  MAX_RUNNING_PER_PROJECT: z.coerce.number().int().min(0).default(8),
  /**
   * How long a grant of the catalog (CheckAccess) is reused at most; a loss of access ends it at
   * once anyway (kit access-cache.ts, the access epoch). 0 asks the catalog on every call.
   */
  ACCESS_CACHE_MS: z.coerce.number().int().min(0).default(30_000),
  /** A watched run is read again this often even without a change notice (one may be lost). */
  WATCH_REFRESH_MS: ms(5_000),
  /**
   * The shortest time between two reads of one watched run's changes on a replica: the changes
   * that come sooner share the next read and message (so a run's watchers cost at most 1000/this
   * reads a second, however fast it changes); 0 reads on every notice.
   */
  WATCH_READ_SPACING_MS: z.coerce.number().int().min(0).max(5_000).default(100),
  /** WatchRun streams one replica serves at once; beyond, RESOURCE_EXHAUSTED. */
  WATCH_MAX_STREAMS: z.coerce.number().int().min(1).default(1_000),
});

export type Config = z.infer<typeof configSchema>;
