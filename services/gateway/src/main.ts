import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { httpLimitsOf, runService, serveHttp, serviceClient } from "@testrun/kit";
import { configSchema } from "./config.js";
import { wireGateway } from "./wiring.js";

await runService({
  name: "gateway",
  config: configSchema,
  redis: "auto-pipelined",
  async setup({ config, logger, redis, onShutdown, isReady }) {
    const clientOptions = { token: config.SERVICE_TOKEN, timeoutMs: config.RPC_TIMEOUT_MS };
    const gateway = wireGateway({
      config,
      redis,
      logger,
      isReady,
      keys: serviceClient(KeysService, config.KEYS_URL, clientOptions),
      catalog: serviceClient(CatalogService, config.CATALOG_URL, clientOptions),
      runs: serviceClient(RunsService, config.RUNS_URL, clientOptions),
    });
    // Registered before the HTTP server's close, so it runs after it: the last uses are in.
    onShutdown(() => gateway.stop());
    await serveHttp(gateway.app, {
      port: config.HTTP_PORT,
      host: config.HOST,
      logger,
      shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
      onShutdown,
      limits: httpLimitsOf(config),
      // Expect: 100-continue is answered only once the key is good (routes/v1.ts, jsonBody).
      holdContinue: true,
    });
    // Shutting down ends every long-poll at once (with the run as it is), before the HTTP server
    // waits for the requests in flight: registered after serveHttp's close, it runs first.
    onShutdown(() => gateway.endWaits());
    return [];
  },
});
