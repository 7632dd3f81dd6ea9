import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { runService, serveHttp, serviceClient } from "@testrun/kit";
import { createApp } from "./app.js";
import { Authenticator } from "./auth.js";
import { configSchema } from "./config.js";
import { IdempotencyStore } from "./idempotency.js";
import { KeyUseRecorder } from "./key-use.js";
import { RequestLimits } from "./limits.js";
import { WaitSlots } from "./waits.js";

await runService({
  name: "gateway",
  config: configSchema,
  redis: "auto-pipelined",
  async setup({ config, logger, redis, onShutdown, isReady }) {
    const clientOptions = { token: config.SERVICE_TOKEN, timeoutMs: config.RPC_TIMEOUT_MS };
    const keys = serviceClient(KeysService, config.KEYS_URL, clientOptions);
    const catalog = serviceClient(CatalogService, config.CATALOG_URL, clientOptions);
    const runs = serviceClient(RunsService, config.RUNS_URL, clientOptions);

    const uses = new KeyUseRecorder(keys, logger);
    uses.start();
    // Registered before the HTTP server's close, so it runs after it: the last uses are in.
    onShutdown(() => uses.stop());

    const limits = new RequestLimits(redis, {
      requestsPerMinute: config.RATE_LIMIT_PER_MINUTE,
      authFailuresPerMinute: config.AUTH_FAILURES_PER_MINUTE,
      keyCacheSecret: config.KEY_CACHE_SECRET,
    });
    // Shutting down ends every long-poll at once (with the run as it is), before the HTTP server
    // waits for the requests in flight: registered after serveHttp's close below, it runs first.
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
    await serveHttp(app, {
      port: config.HTTP_PORT,
      host: config.HOST,
      logger,
      shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
      onShutdown,
    });
    onShutdown(() => stopping.abort());
    return [];
  },
});
