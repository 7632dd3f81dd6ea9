import { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { connectRedis, loadConfig } from "@testrun/kit";
import { Redis } from "ioredis";
import pg from "pg";
import type { InProcessCatalog } from "./catalog-in-process.js";
import { capturedLogger, type InProcessRpc, inProcessRpc, migratedTestDatabase } from "./in-process.js";
import { componentRedisUrl } from "./redis-users.js";
import type { RunsStack } from "./runs.js";
import { createTestDatabase } from "./servers.js";
import { testTokens } from "./tokens.js";

/**
 * The runs service's and billing's code, loaded by `import()`: mocha requires test files, and tsx
 * turns what they import statically into CommonJS copies, beside the ES module copies the kit
 * loads; `instanceof` across the two fails (docs/development.md, "Tests").
 */
const runsCode = () => import("@testrun/runs");
const billingCode = () => import("@testrun/billing");
const catalogTesting = () => import("./catalog-in-process.js");

/** The stack in-process, and where it is served. */
export interface InProcessRunsStack extends RunsStack {
  /** Serves catalog, billing and runs; they call each other through it. */
  rpc: InProcessRpc;
  /** The catalog, with its own log (its audit lines, say). */
  catalog: InProcessCatalog;
  /** Every line the runs service logged so far (the call log of all three with them). */
  lines(): string[];
  /** Resolves with the first line of the runs service's log, logged or still to come, that passes `test`. */
  logLine(test: (line: string) => boolean): Promise<string>;
  /**
   * Serves the same runs service (its handlers, database and Redis) on a real socket too, as its
   * server does (`startRpcServer`: HTTP/2, the gRPC framing, the per-method body bounds), for
   * clients built from the .proto files (grpc-js). Resolves with its URL; closed by `stop`.
   */
  listen(): Promise<string>;
}

/**
 * Catalog, billing and runs wired as their main.ts wire them (`startInProcessCatalog`, `wireBilling`,
 * `wireRuns`), on freshly migrated databases of the test run's PostgreSQL and the runs service's own
 * Redis user on database `redisDb` (flushed first), all served on one `inProcessRpc`: the catalog
 * tells the runs service of deleted projects, runs calls catalog and billing, billing calls the
 * catalog, each through the service-token gate and interceptors of the real server. `runsEnv`
 * overrides the runs service's settings. The runs service's background work (reconciler, run
 * events, artifact sweeper) runs here as in production.
 *
 * What crosses processes (sockets and gRPC framing, replicas, signals and draining, executors) is
 * for `startRunsProcessStack` of `@testrun/testing`.
 */
export async function startInProcessRunsStack(
  runsEnv: Record<string, string> = {},
  redisDb = 5,
  /** The catalog's own settings (LOG_LEVEL, say). */
  catalogEnv: Record<string, string> = {},
): Promise<InProcessRunsStack> {
  const { configSchema, database, wireRuns } = await runsCode();
  const billingWiring = await billingCode();
  const { startInProcessCatalog } = await catalogTesting();
  const tokens = testTokens();
  const adminRedisUrl = new URL(String(process.env.REDIS_URL));
  adminRedisUrl.pathname = `/${redisDb}`;
  const redisUrlOf = (component: string) => componentRedisUrl(adminRedisUrl.toString(), component);
  const env: Record<string, string> = {
    ...tokens,
    DATABASE_URL: await createTestDatabase(String(process.env.DATABASE_URL)),
    // The administrator's URL of the database; the runs service connects as its own user.
    REDIS_URL: adminRedisUrl.toString(),
    // Reached in-process, not at a URL; where nothing listens, should anything dial them.
    CATALOG_URL: "http://127.0.0.1:1",
    BILLING_URL: "http://127.0.0.1:1",
    APP_URL: "https://app.testrun.example",
    ...runsEnv,
  };
  const config = loadConfig(configSchema, { ...env, REDIS_URL: redisUrlOf("runs") });
  const log = capturedLogger("runs", config.LOG_LEVEL);
  const rpc = inProcessRpc({
    tokens: { service: tokens.SERVICE_TOKEN, executor: tokens.EXECUTOR_TOKEN },
    logger: log.logger,
  });
  const catalog = await startInProcessCatalog(catalogEnv, {
    rpc,
    tokens,
    runs: rpc.client(RunsService, tokens.SERVICE_TOKEN),
  });
  // Billing keeps its schema in the catalog's database, as in the process stack.
  const billingDb = await migratedTestDatabase(billingWiring.database, catalog.env.DATABASE_URL);
  const billingWired = billingWiring.wireBilling({
    orm: billingDb.orm,
    catalog: rpc.client(CatalogService, tokens.SERVICE_TOKEN),
  });
  rpc.serve(...billingWired.services);
  const { orm } = await migratedTestDatabase(database, env.DATABASE_URL);
  const redis = new Redis(env.REDIS_URL as string);
  await redis.flushdb();
  const runsRedis = await connectRedis(config.REDIS_URL, { autoPipelining: true });
  const runs = wireRuns({
    config,
    orm,
    redis: runsRedis,
    logger: log.logger,
    catalog: rpc.client(CatalogService, tokens.SERVICE_TOKEN),
    billing: rpc.client(BillingService, tokens.SERVICE_TOKEN),
  });
  rpc.serve(...runs.services);
  const db = new pg.Client({ connectionString: env.DATABASE_URL });
  await db.connect();
  const sockets: { shutdown(timeoutMs: number): Promise<void> }[] = [];
  return {
    catalog,
    env,
    rpc,
    runs: rpc.client(RunsService, tokens.SERVICE_TOKEN),
    executor: rpc.client(RunsService, tokens.EXECUTOR_TOKEN),
    billing: rpc.client(BillingService, tokens.SERVICE_TOKEN),
    redis,
    redisUrlOf,
    db,
    lines: log.lines,
    logLine: log.line,
    async listen() {
      // The kit's ES module copy, whose context keys the handlers know (see runsCode above).
      const { startRpcServer } = await import("@testrun/kit");
      const server = await startRpcServer({
        services: runs.services,
        host: "127.0.0.1",
        port: 0,
        tokens: { service: tokens.SERVICE_TOKEN, executor: tokens.EXECUTOR_TOKEN },
        logger: log.logger,
      });
      sockets.push(server);
      return `http://127.0.0.1:${server.port}`;
    },
    async stop() {
      for (const server of sockets) await server.shutdown(1_000);
      // As main.ts's shutdown: background work first, then Redis and the databases.
      await runs.stop();
      await billingWired.stop();
      redis.disconnect();
      await db.end();
      await runsRedis.quit();
      await orm.close();
      await billingDb.orm.close();
      await catalog.stop();
    },
  };
}
