import { baseConfigSchema, keyCacheSecret, portVar, postgresUrl, redisUrl, serviceUrl } from "@testrun/kit";
import type { z } from "zod";

/** The keys service's environment. The Helm chart sets every variable without a default (test/chart.test.ts checks). */
export const configSchema = baseConfigSchema.extend({
  PORT: portVar(7101),
  // GET /metrics for Prometheus (docs/operations.md, "Metrics"); 0 turns it off.
  METRICS_PORT: portVar(9461),
  DATABASE_URL: postgresUrl,
  /** Where the verified-key cache lives, shared with the gateway (services/kit/src/key-cache.ts). */
  REDIS_URL: redisUrl,
  /** Seals the cache entries it writes, so that the gateway trusts only those (kit key-cache.ts). */
  KEY_CACHE_SECRET: keyCacheSecret,
  /** The catalog, which authorizes member and operator actors (CheckAccess). */
  CATALOG_URL: serviceUrl.default("http://127.0.0.1:7102"),
});

export type Config = z.infer<typeof configSchema>;
