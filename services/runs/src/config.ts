import { baseConfigSchema, portVar, postgresUrl, redisUrl, serviceUrl } from "@testrun/kit";
import { z } from "zod";

const ms = (defaultMs: number) => z.coerce.number().int().positive().default(defaultMs);
const MiB = 1024 * 1024;
const bytes = (defaultBytes: number) => z.coerce.number().int().positive().default(defaultBytes);

/** The runs service's environment. The Helm chart sets every variable without a default (test/chart.test.ts checks). */
export const configSchema = baseConfigSchema
  .extend({
    PORT: portVar(7104),
    // GET /metrics for Prometheus (docs/operations.md, "Metrics"); 0 turns it off.
    METRICS_PORT: portVar(9464),
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

    // Artifacts (docs/runs.md, "Artifacts"): what tests produce (screenshots, traces, browser logs).
    /**
     * Where their bytes live: `postgres` (the default: in the runs schema, nothing else to set up) or
     * `s3` (any S3-compatible object store, ARTIFACT_S3_*). Their metadata is always in PostgreSQL.
     */
    ARTIFACT_STORE: z.enum(["postgres", "s3"]).default("postgres"),
    /** The largest artifact PutArtifact stores (20 MiB); beyond, RESOURCE_EXHAUSTED. */
    ARTIFACT_MAX_BYTES: bytes(20 * MiB).refine((n) => n <= 256 * MiB, "must be at most 256 MiB"),
    /** The most bytes of artifacts one run holds, all its tests together (200 MiB). */
    RUN_ARTIFACTS_MAX_BYTES: bytes(200 * MiB),
    /**
     * The most artifacts one test's attempt holds: a 100-step test with a screenshot at every step,
     * the failure's screenshot, its trace and its browser log come to 103.
     */
    TEST_ARTIFACTS_MAX_COUNT: z.coerce.number().int().min(1).max(10_000).default(110),
    /** How long artifacts are kept; older ones are NOT_FOUND at once and deleted by the sweeper. */
    ARTIFACT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(30),
    /** How often the artifact sweeper deletes expired artifacts and those of deleted projects. */
    ARTIFACT_SWEEP_INTERVAL_MS: ms(60_000),
    /** The bucket of ARTIFACT_STORE=s3 (required then). */
    ARTIFACT_S3_BUCKET: z.string().min(3).max(63).optional(),
    /** Prefix of the object keys in the bucket (e.g. `testrun/`), so one bucket can serve several installs. */
    ARTIFACT_S3_PREFIX: z.string().max(200).default(""),
    /** The store's endpoint for a store that is not AWS S3 (MinIO, Ceph, R2, …); unset: AWS's. */
    ARTIFACT_S3_ENDPOINT: z.url().optional(),
    ARTIFACT_S3_REGION: z.string().min(1).default("us-east-1"),
    /** Path-style addressing (`endpoint/bucket/key`), which most S3-compatible stores need. */
    ARTIFACT_S3_FORCE_PATH_STYLE: z
      .enum(["true", "false"])
      .default("false")
      .transform((value) => value === "true"),
    /**
     * Static credentials. Unset: the AWS SDK's default chain (an IAM role of the pod, say). Only the
     * runs service holds them; executors hand artifacts over through PutArtifact.
     */
    ARTIFACT_S3_ACCESS_KEY_ID: z.string().min(1).optional(),
    ARTIFACT_S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  })
  .superRefine((config, ctx) => {
    if (config.ARTIFACT_STORE === "s3" && !config.ARTIFACT_S3_BUCKET)
      ctx.addIssue({
        code: "custom",
        path: ["ARTIFACT_S3_BUCKET"],
        message: "is required when ARTIFACT_STORE is s3",
      });
    if (!config.ARTIFACT_S3_ACCESS_KEY_ID !== !config.ARTIFACT_S3_SECRET_ACCESS_KEY)
      ctx.addIssue({
        code: "custom",
        path: ["ARTIFACT_S3_SECRET_ACCESS_KEY"],
        message: "ARTIFACT_S3_ACCESS_KEY_ID and ARTIFACT_S3_SECRET_ACCESS_KEY go together",
      });
  });

export type Config = z.infer<typeof configSchema>;
