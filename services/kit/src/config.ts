import { z } from "zod";

/** Thrown when the environment does not describe a runnable service; its message lists every problem. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Variables every service reads. Services extend this with their own. */
export const baseConfigSchema = z.object({
  HOST: z.string().default("0.0.0.0"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** The internal token this process sends to other services and accepts from them. */
  SERVICE_TOKEN: z.string().min(32, "must be at least 32 characters"),
  /**
   * The token executors present. A service that knows it can tell an executor's calls apart
   * (the catalog hands variable values only to executors); optional elsewhere.
   */
  EXECUTOR_TOKEN: z.string().min(32, "must be at least 32 characters").optional(),
  /**
   * How long the process keeps serving after SIGTERM while reporting not ready, so that load
   * balancers and Kubernetes endpoints stop sending it traffic before it stops accepting. 0: none.
   */
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).default(0),
  /** How long in-flight calls may run, once the drain is over, before they are cut off. */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /**
   * HTTP/2 connections the gRPC port (PORT) holds at once; past it a new connection is closed as
   * soon as it opens (docs/security.md, "Resource limits": sized from measured memory).
   */
  RPC_MAX_CONNECTIONS: z.coerce.number().int().positive().default(500),
  /** Seconds an HTTP/2 connection of the gRPC port may stay without a stream before it is closed (GOAWAY). */
  RPC_IDLE_TIMEOUT_SECONDS: z.coerce.number().int().positive().default(300),
});

/**
 * The bounds of a browser- or pipeline-facing HTTP/1.1 port (the gateway's /v1, the console), for
 * the services that serve one (`serveHttp`); docs/security.md, "Resource limits".
 */
export const httpLimitsConfig = {
  /** Open connections one replica takes; past it a new one is closed at once (idle keep-alive ones are closed first to make room). */
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().positive().default(4_000),
  /** Seconds from a connection's first byte (or its opening) until a request's headers are complete. */
  HTTP_HEADERS_TIMEOUT_SECONDS: z.coerce.number().int().positive().default(10),
  /** Seconds a request's whole body may take to arrive, once its headers are in; then 408 and the connection closes. */
  HTTP_BODY_TIMEOUT_SECONDS: z.coerce.number().int().positive().default(30),
  /** Seconds a keep-alive connection may wait for its next request: above the 60 s of ingresses and load balancers, so they close first. */
  HTTP_IDLE_TIMEOUT_SECONDS: z.coerce.number().int().positive().default(65),
};

export type BaseConfig = z.infer<typeof baseConfigSchema>;

/** A port variable with a default; every service listens on a documented fixed port. */
export const portVar = (defaultPort: number) =>
  z.coerce.number().int().min(0).max(65_535).default(defaultPort);

/** A postgres:// or postgresql:// URL. */
export const postgresUrl = z
  .string()
  .regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL")
  .describe("PostgreSQL connection URL");

/** A redis:// or rediss:// URL. */
export const redisUrl = z.string().regex(/^rediss?:\/\//, "must be a redis:// URL");

/**
 * KEY_CACHE_SECRET: the key of the MACs that seal the verified-key cache (key-cache.ts). Only the
 * keys service (which writes the cache) and the gateway (which reads it) hold it.
 */
export const keyCacheSecret = z.string().min(32, "must be at least 32 characters");

/** A host:port or http(s) URL of another service. */
export const serviceUrl = z.string().regex(/^https?:\/\/[^/]+$/, "must be like http://host:port");

/**
 * Parses the environment against a schema, failing fast with every problem at once,
 * never echoing a value (they may be secrets).
 */
export function loadConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const name = issue.path.join(".") || "(environment)";
    const message =
      issue.code === "invalid_type" && issue.input === undefined ? "is required" : issue.message;
    return `  ${name}: ${message}`;
  });
  throw new ConfigError(`invalid configuration:\n${problems.join("\n")}`);
}
