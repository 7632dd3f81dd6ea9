import { baseConfigSchema, portVar, postgresUrl, redisUrl, serviceUrl } from "@testrun/kit";
import { z } from "zod";
import { isBase64Key } from "./cipher.js";

/** The catalog's environment. The Helm chart sets every variable without a default (test/chart.test.ts checks). */
export const configSchema = baseConfigSchema.extend({
  PORT: portVar(7102),
  // GET /metrics for Prometheus (docs/operations.md, "Metrics"); 0 turns it off.
  METRICS_PORT: portVar(9462),
  DATABASE_URL: postgresUrl,
  /** Where it announces changes that take access away (docs/security.md, "Cached grants"). */
  REDIS_URL: redisUrl,
  /** The keys service, told when a member loses rights or a project is deleted (default: its local port). */
  KEYS_URL: serviceUrl.default("http://127.0.0.1:7101"),
  /** The runs service, told when a project is deleted, so its artifacts go too (default: its local port). */
  RUNS_URL: serviceUrl.default("http://127.0.0.1:7104"),
  /** The billing service, asked for a new project's credits (default: its local port). */
  BILLING_URL: serviceUrl.default("http://127.0.0.1:7103"),
  /**
   * Credits every new project is granted once (a ledger grant keyed by the project, through the
   * outbox: never twice, and not lost when billing is down). 0 grants nothing: credits come only
   * from an operator's `testrunctl credits grant`. The chart sets 100, `make run` 10,000.
   */
  NEW_PROJECT_CREDITS: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
  /**
   * How many of an organization's projects, at most, are granted NEW_PROJECT_CREDITS. Counted on
   * the organization and never given back (deleting a project frees no grant), so an Admin cannot
   * farm credits by creating and deleting projects; later projects start with none. The chart sets
   * 3, `make run` 1,000.
   */
  NEW_PROJECT_GRANTS_PER_ORGANIZATION: z.coerce.number().int().min(0).max(1_000_000).default(3),
  /**
   * First wait before retrying a notification the keys service (or the runs service) did not
   * acknowledge; doubles each time.
   */
  KEYS_RETRY_MS: z.coerce.number().int().positive().default(10_000),
  /**
   * How often the info-level audit line of executors' reads of variable values sums the reads since
   * the last (variable-reads-audit.ts); each read is logged at debug.
   */
  VARIABLE_READS_AUDIT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(60_000),
  /**
   * The AES-256 key of variable values: 32 bytes, base64. Without it the catalog still serves
   * everything else, and refuses to store or hand out variable values (FAILED_PRECONDITION).
   */
  VARIABLES_KEY: z.string().refine(isBase64Key, "must be 32 bytes, base64-encoded").optional(),
});

export type Config = z.infer<typeof configSchema>;
