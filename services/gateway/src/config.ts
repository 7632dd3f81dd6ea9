import {
  baseConfigSchema,
  httpLimitsConfig,
  keyCacheSecret,
  portVar,
  redisUrl,
  serviceUrl,
} from "@testrun/kit";
import { z } from "zod";

const positiveInt = (defaultValue: number) => z.coerce.number().int().positive().default(defaultValue);

/** The gateway's environment: where its services are, and its limits. The Helm chart sets every variable without a default (test/chart.test.ts checks). */
export const configSchema = baseConfigSchema.extend({
  // PORT serves gRPC health (for uniform probes); HTTP_PORT serves /v1.
  PORT: portVar(7100),
  // GET /metrics for Prometheus (docs/operations.md, "Metrics"); 0 turns it off.
  METRICS_PORT: portVar(9460),
  HTTP_PORT: portVar(8080),
  // The HTTP port's connection cap and timeouts (kit config.ts; docs/security.md, "Resource limits").
  ...httpLimitsConfig,
  // Defaults: the fixed local ports of `make run`, as the other services default them.
  KEYS_URL: serviceUrl.default("http://127.0.0.1:7101"),
  CATALOG_URL: serviceUrl.default("http://127.0.0.1:7102"),
  /** The runs service, which starts and reports runs. */
  RUNS_URL: serviceUrl.default("http://127.0.0.1:7104"),
  REDIS_URL: redisUrl,
  /** Opens the verified-key cache entries the keys service sealed; others read as absent (kit key-cache.ts). */
  KEY_CACHE_SECRET: keyCacheSecret,
  /** Requests a key may make per minute, shared by every gateway replica. */
  RATE_LIMIT_PER_MINUTE: positiveInt(60),
  /** Long-polls (GET /v1/runs/{id}?wait) a key may hold at once, across every gateway replica. */
  WAITS_PER_KEY: positiveInt(10),
  /**
   * Long-polls the keys of one project may hold at once together, across every gateway replica:
   * one tenant with many keys cannot take every WatchRun stream of the runs service.
   */
  WAITS_PER_PROJECT: positiveInt(50),
  /** Failed authentications a client address may make per minute before it gets 429. */
  AUTH_FAILURES_PER_MINUTE: positiveInt(20),
  /**
   * How many reverse proxies in front of the gateway append to X-Forwarded-For. 0 (the default)
   * ignores the header and uses the connection's address: trusting it without a proxy would let a
   * client pick its own address and escape the failed-authentication limit.
   */
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  /**
   * The REST API's public origin (`https://host[:port]`, no path), the base of the artifact urls
   * in test results (`{API_URL}/v1/runs/{runId}/tests/{testResultId}/artifacts/{artifactId}`). Unset: the origin each request came to (its
   * Host, and X-Forwarded-Proto/-Host from trusted proxies, TRUST_PROXY_HOPS).
   */
  API_URL: z
    .string()
    .regex(/^https?:\/\/[^/?#]+$/, "must be like https://host[:port], without a path or trailing slash")
    .optional(),
  /** Deadline of every gRPC call the gateway makes, but StartRun. */
  RPC_TIMEOUT_MS: positiveInt(5_000),
  /**
   * Deadline of StartRun, which waits on the catalog and on billing in turn. It must outlast the
   * runs service's own calls: a start the gateway stopped waiting for could be charged and
   * started while the client got a bare 500 and posted again.
   */
  START_RUN_TIMEOUT_MS: positiveInt(30_000),
});

export type Config = z.infer<typeof configSchema>;
