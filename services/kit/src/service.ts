import { setTimeout as delay } from "node:timers/promises";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { z } from "zod";
import { type BaseConfig, ConfigError, loadConfig } from "./config.js";
import { type DatabaseSpec, migrateDatabase, type Orm, openDatabase } from "./db.js";
import { createLogger, exitOnceLogged } from "./logger.js";
import { initMetrics, turnMetricsOff } from "./metrics/registry.js";
import { serveMetrics } from "./metrics/server.js";
import { connectRedis } from "./redis.js";
import { ServingStatus } from "./rpc/health.js";
import { type ServiceBinding, startRpcServer } from "./rpc/server.js";
import { ShutdownBudget, shutdownCleanupMs } from "./shutdown.js";

/** What a service's code is handed once configuration, database and Redis are ready. */
export interface ServiceContext<C> {
  config: C;
  logger: Logger;
  /** The service's database; throws when the service declared none. */
  readonly orm: Orm;
  /** The Redis connection; throws when the service did not declare it uses Redis. */
  readonly redis: Redis;
  /**
   * Registers a clean-up step run at shutdown, after calls in flight ended; last registered runs
   * first. Steps share what is left of the shutdown budget: one still running when it is spent is
   * abandoned (`name` says which in the log).
   */
  onShutdown(step: () => Promise<void> | void, name?: string): void;
  /**
   * Registers what stops background work the moment SIGTERM arrives (an executor stops taking
   * tests), running alongside the drain: work that is not a call would otherwise go on being taken
   * while the process only pretends to leave. Awaited before calls in flight are cut off.
   */
  onStopping(step: () => Promise<void> | void): void;
  /**
   * Whether the process takes new work: false until it serves, and again from SIGTERM on, while it
   * drains (what readiness probes report; gRPC health says the same).
   */
  isReady(): boolean;
  /**
   * Reports a part of the service under its own name in gRPC health, beside the process (""): SERVING
   * while `serving` (and the process serves), NOT_SERVING otherwise; from SIGTERM on, NOT_SERVING like
   * the rest. An executor reports each kind of test it is configured for (a probe may ask for one).
   */
  setHealth(name: string, serving: boolean): void;
}

/**
 * What runService needs of a service's configuration. SERVICE_TOKEN may be left out by a service
 * that only calls others under another identity (the executor, which holds EXECUTOR_TOKEN alone).
 */
export type ServiceConfig = Omit<BaseConfig, "SERVICE_TOKEN"> & {
  SERVICE_TOKEN?: string;
  PORT: number;
  /** Where GET /metrics is served (docs/operations.md, "Metrics"); 0 or unset: not served. */
  METRICS_PORT?: number;
};

export interface ServiceDefinition<S extends z.ZodType<ServiceConfig>> {
  /** Short name (keys, catalog, …): used in logs, traces and health. */
  name: string;
  config: S;
  /** The service's own schema, entities and migrations; needs DATABASE_URL in the config. */
  database?: DatabaseSpec;
  /**
   * Whether the service talks to Redis; needs REDIS_URL in the config. "auto-pipelined": commands
   * of one tick share a write (connectRedis), for services that send one per request.
   */
  redis?: boolean | "auto-pipelined";
  /**
   * Calls one connection may have open at once, from the configuration, for a service whose calls
   * last (streams); `defaultStreamsPerConnection` otherwise.
   */
  streamsPerConnection?: (config: z.infer<S>) => number;
  /** Builds the gRPC services to serve (and starts any background work, registering its stop). */
  setup(ctx: ServiceContext<z.infer<S>>): Promise<ServiceBinding[]> | ServiceBinding[];
}

/**
 * The `main` of every service. `serve` (the default) runs it until SIGTERM or SIGINT, then shuts
 * down gracefully and exits 0; `migrate` applies the service's pending database migrations and exits.
 *
 * Shutdown: at once not ready (gRPC health NOT_SERVING, `isReady()` false) and background work
 * told to stop (`onStopping`), while calls are still served for SHUTDOWN_DRAIN_MS, so endpoints drop this replica before it goes; then no new calls (GOAWAY),
 * calls in flight get SHUTDOWN_TIMEOUT_MS, clean-up steps run, and the process exits 0. Everything
 * after SIGTERM fits SHUTDOWN_DRAIN_MS + SHUTDOWN_TIMEOUT_MS + shutdownCleanupMs: a step still
 * waiting then (on a database or Redis that stopped answering, say) is abandoned, and the process
 * exits 1, saying which steps it abandoned.
 */
export async function runService<S extends z.ZodType<ServiceConfig>>(
  definition: ServiceDefinition<S>,
  argv: readonly string[] = process.argv.slice(2),
): Promise<void> {
  const command = argv[0] ?? "serve";
  let config: z.infer<S>;
  try {
    config = loadConfig(definition.config);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${definition.name}: ${error.message}\n`);
    process.exit(1);
  }
  const logger = createLogger(definition.name, config.LOG_LEVEL);
  process.on("uncaughtException", (err) => {
    logger.fatal({ err }, "uncaught exception");
    process.exit(1);
  });
  process.on("unhandledRejection", (err) => {
    logger.fatal({ err }, "unhandled rejection");
    process.exit(1);
  });

  const env = config as Record<string, unknown>;
  const orm = definition.database
    ? await openDatabase(String(env.DATABASE_URL), definition.database)
    : undefined;

  if (command === "migrate") {
    if (!orm || !definition.database) {
      process.stderr.write(`${definition.name}: has no database, so nothing to migrate\n`);
      process.exit(2);
    }
    const applied = await migrateDatabase(orm, definition.database);
    logger.info({ schema: definition.database.schema, applied }, "migrations applied");
    await orm.close();
    return;
  }
  if (command !== "serve") {
    process.stderr.write(`${definition.name}: unknown command "${command}" (use serve or migrate)\n`);
    process.exit(2);
  }

  // Before setup, which makes the service's own metrics: every series says which component it is.
  if (config.METRICS_PORT) initMetrics(definition.name);
  else turnMetricsOff();
  const shutdownSteps: { name: string; run: () => Promise<void> | void }[] = [];
  const stoppingSteps: (() => Promise<void> | void)[] = [];
  if (orm) shutdownSteps.push({ name: "closing the database", run: () => orm.close() });
  const redis = definition.redis
    ? await connectRedis(String(env.REDIS_URL), { autoPipelining: definition.redis === "auto-pipelined" })
    : undefined;
  if (redis) shutdownSteps.push({ name: "closing Redis", run: async () => void (await redis.quit()) });

  let ready = false;
  let stopping = false;
  /** The parts set through setHealth; applied once the server serves, and at every change after. */
  const parts = new Map<string, boolean>();
  let health: { set(name: string, status: ServingStatus): void } | undefined;
  const undeclared = (what: string): never => {
    throw new Error(`${definition.name} did not declare ${what} in its service definition`);
  };
  const services = await definition.setup({
    config,
    logger,
    get orm() {
      return orm ?? undeclared("a database");
    },
    get redis() {
      return redis ?? undeclared("redis");
    },
    onShutdown: (step, name = `clean-up step ${shutdownSteps.length + 1}`) =>
      shutdownSteps.push({ name, run: step }),
    onStopping: (step) => stoppingSteps.push(step),
    isReady: () => ready,
    setHealth: (name, serving) => {
      parts.set(name, serving);
      if (ready && !stopping) health?.set(name, serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
    },
  });
  const server = await startRpcServer({
    services,
    host: config.HOST,
    port: config.PORT,
    tokens: { service: config.SERVICE_TOKEN, executor: config.EXECUTOR_TOKEN },
    logger,
    streamsPerConnection: definition.streamsPerConnection?.(config),
    maxConnections: config.RPC_MAX_CONNECTIONS,
    idleTimeoutSeconds: config.RPC_IDLE_TIMEOUT_SECONDS,
  });
  if (config.METRICS_PORT) {
    const metrics = await serveMetrics({ port: config.METRICS_PORT, host: config.HOST, logger });
    // Scraped through the drain; closed with the other clean-up steps.
    shutdownSteps.push({
      name: "closing the metrics server",
      run: () => new Promise<void>((resolve) => metrics.close(() => resolve()).closeAllConnections()),
    });
  }
  server.health.setAll(ServingStatus.SERVING);
  health = server.health;
  for (const [name, serving] of parts)
    health.set(name, serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
  ready = true;
  logger.info({ port: server.port }, "listening");

  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ready = false;
    server.health.setAll(ServingStatus.NOT_SERVING);
    logger.info({ signal, drainMs: config.SHUTDOWN_DRAIN_MS }, "shutting down");
    const budgetMs = config.SHUTDOWN_DRAIN_MS + config.SHUTDOWN_TIMEOUT_MS + shutdownCleanupMs;
    const budget = new ShutdownBudget(budgetMs, logger);
    const stopped = Promise.all(
      stoppingSteps.map((step) =>
        Promise.resolve()
          .then(step)
          .catch((err: unknown) => logger.error({ err }, "stopping step failed")),
      ),
    );
    // Still serving, new connections included: until endpoints drop this replica, traffic still comes.
    if (config.SHUTDOWN_DRAIN_MS > 0) await delay(config.SHUTDOWN_DRAIN_MS);
    await budget.run("stopping background work", () => stopped);
    logger.info({ timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, "closing");
    await budget.run("finishing calls in flight", () =>
      server.shutdown(Math.min(config.SHUTDOWN_TIMEOUT_MS, budget.remainingMs())),
    );
    for (const step of shutdownSteps.reverse()) await budget.run(step.name, step.run);
    if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT)
      await budget.run("flushing traces", async () => (await import("./telemetry/sdk.js")).stopTelemetry());
    if (budget.unfinished.length > 0) {
      // Left running, not finished: the exit closes their connections.
      logger.error({ unfinished: budget.unfinished, budgetMs }, "shutdown budget ran out");
      return exitOnceLogged(logger, 1);
    }
    logger.info("stopped");
    return exitOnceLogged(logger, 0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
}
