import { randomBytes } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { connectRedis, loadConfig, serviceClient } from "@testrun/kit";
import pg from "pg";
import type { CatalogHarness } from "./catalog.js";
import { capturedLogger, type InProcessRpc, inProcessRpc, migratedTestDatabase } from "./in-process.js";
import { componentRedisUrl } from "./redis-users.js";
import { testTokens } from "./tokens.js";

/**
 * The catalog's code, loaded by `import()`. Mocha requires test files, and tsx turns what they
 * import statically into CommonJS copies, while the kit opens databases through `import()` (the
 * ES module copy of MikroORM): the catalog's `instanceof UniqueConstraintViolationException` would
 * then compare classes of two copies and miss. Loaded here, it shares the kit's copy.
 */
const catalogCode = () => import("@testrun/catalog");

/** A catalog served in the test's process, and where it is served. */
export interface InProcessCatalog extends CatalogHarness {
  /** Serves the catalog; serve another service here and both call each other in-process. */
  rpc: InProcessRpc;
  /** Every line the catalog logged so far. */
  lines(): string[];
}

/**
 * The catalog wired as main.ts wires it (`wireCatalog`), on a freshly migrated database of the
 * test run's PostgreSQL and its own Redis user, served in-process through a router transport
 * (`inProcessRpc`: the service-token gate and interceptors of the real server). By default the
 * keys, runs and billing services are not running: their URLs point at a port where nothing
 * listens, as when they are down. `keys`/`runs`/`billing` (clients of `options.rpc`, say) put them
 * in reach.
 *
 * What it does not exercise is what crosses processes: the socket, HTTP/2, the gRPC framing, the
 * `serve`/`migrate` commands, signals. Each service keeps tests over a real process for those.
 */
export async function startInProcessCatalog(
  /** Variables to set, or (undefined) to leave out; a DATABASE_URL here is used, not a fresh one. */
  extraEnv: Record<string, string | undefined> = {},
  options: {
    rpc?: InProcessRpc;
    keys?: Client<typeof KeysService>;
    runs?: Client<typeof RunsService>;
    billing?: Client<typeof BillingService>;
    /** The tokens (those of `rpc` when it is given); fresh ones otherwise, or those of `extraEnv`. */
    tokens?: ReturnType<typeof testTokens>;
  } = {},
): Promise<InProcessCatalog> {
  const { configSchema, database, wireCatalog } = await catalogCode();
  const tokens = options.tokens ?? testTokens();
  const { url, orm } = await migratedTestDatabase(database, extraEnv.DATABASE_URL);
  const env: Record<string, string | undefined> = {
    ...tokens,
    DATABASE_URL: url,
    KEYS_URL: "http://127.0.0.1:1",
    RUNS_URL: "http://127.0.0.1:1",
    BILLING_URL: "http://127.0.0.1:1",
    // As deployed: the catalog's own Redis user (test/global-setup.ts made it).
    REDIS_URL: componentRedisUrl(String(process.env.REDIS_URL), "catalog"),
    VARIABLES_KEY: randomBytes(32).toString("base64"),
    ...extraEnv,
  };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  const config = loadConfig(configSchema, env);
  const log = capturedLogger("catalog", config.LOG_LEVEL);
  const redis = await connectRedis(config.REDIS_URL);
  const rpc =
    options.rpc ??
    inProcessRpc({
      tokens: { service: config.SERVICE_TOKEN, executor: config.EXECUTOR_TOKEN },
      logger: log.logger,
    });
  const peer = { token: config.SERVICE_TOKEN, timeoutMs: 3_000 };
  const wired = wireCatalog({
    config,
    orm,
    redis,
    logger: log.logger,
    keys: options.keys ?? serviceClient(KeysService, config.KEYS_URL, peer),
    runs: options.runs ?? serviceClient(RunsService, config.RUNS_URL, peer),
    billing: options.billing ?? serviceClient(BillingService, config.BILLING_URL, peer),
  });
  rpc.serve(...wired.services);
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  return {
    env: env as Record<string, string>,
    rpc,
    catalog: rpc.client(CatalogService, config.SERVICE_TOKEN),
    executor: rpc.client(CatalogService, config.EXECUTOR_TOKEN),
    db,
    logLine: log.line,
    lines: log.lines,
    async stop() {
      // As main.ts's shutdown: background work first, then Redis and the database.
      await wired.stop();
      await db.end();
      await redis.quit();
      await orm.close();
    },
  };
}
