import type { Client } from "@connectrpc/connect";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import type { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { Logger } from "@testrun/kit";
import type { Redis } from "ioredis";
import type Koa from "koa";
import { createApp } from "./app.js";
import { Authenticator } from "./auth.js";
import type { Config } from "./config.js";
import type { GatewayState } from "./context.js";
import { IdempotencyStore } from "./idempotency.js";
import { KeyUseRecorder } from "./key-use.js";
import { RequestLimits } from "./limits.js";
import { WaitSlots } from "./waits.js";

export { configSchema } from "./config.js";

/** What the gateway is made of: its configuration, Redis, log, readiness and the services it calls. */
export interface GatewayDependencies {
  config: Config;
  redis: Redis;
  logger: Logger;
  /** False once the process is shutting down (`runService`): answers then close their connection. */
  isReady(): boolean;
  keys: Client<typeof KeysService>;
  catalog: Client<typeof CatalogService>;
  runs: Client<typeof RunsService>;
}

/** The gateway's /v1 HTTP application, and what runs beside it. */
export interface GatewayWiring {
  /** The Koa application main.ts serves on HTTP_PORT. */
  app: Koa<GatewayState>;
  /** Ends every long-poll at once, each answered with the run as it is. */
  endWaits(): void;
  /** Records the last key uses: after the HTTP server closed, so that they are all in. */
  stop(): Promise<void>;
}

/**
 * The gateway's wiring, for main.ts and tests alike: the /v1 application (keys verified and
 * rate-limited in Redis, waits and Idempotency-Key in Redis), and the recorder of key uses it
 * starts at once.
 */
export function wireGateway({
  config,
  redis,
  logger,
  isReady,
  keys,
  catalog,
  runs,
}: GatewayDependencies): GatewayWiring {
  const uses = new KeyUseRecorder(keys, logger);
  uses.start();
  const limits = new RequestLimits(redis, {
    requestsPerMinute: config.RATE_LIMIT_PER_MINUTE,
    authFailuresPerMinute: config.AUTH_FAILURES_PER_MINUTE,
    keyCacheSecret: config.KEY_CACHE_SECRET,
  });
  const stopping = new AbortController();
  const app = createApp({
    logger,
    trustProxyHops: config.TRUST_PROXY_HOPS,
    isReady,
    apiUrl: config.API_URL,
    auth: new Authenticator({ limits, keys, uses }),
    catalog,
    runs,
    startRunTimeoutMs: config.START_RUN_TIMEOUT_MS,
    waits: new WaitSlots(redis, { perKey: config.WAITS_PER_KEY, perProject: config.WAITS_PER_PROJECT }),
    idempotency: new IdempotencyStore(redis, config.START_RUN_TIMEOUT_MS + 10_000),
    stopping: stopping.signal,
  });
  return {
    app,
    endWaits: () => stopping.abort(),
    stop: () => uses.stop(),
  };
}
