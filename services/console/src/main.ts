import { AutomationService } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { httpLimitsOf, runService, serveHttp, serviceClient } from "@testrun/kit";
import { configSchema } from "./config.js";
import { database } from "./db/index.js";
import { registerWatchStreamsGauge } from "./metrics.js";
import { wireConsole } from "./wiring.js";

await runService({
  name: "console",
  config: configSchema,
  database,
  async setup({ config, logger, orm, onShutdown, onStopping, isReady }) {
    const clientOptions = { token: config.SERVICE_TOKEN, timeoutMs: config.RPC_TIMEOUT_MS };
    const wired = wireConsole({
      config,
      orm,
      logger,
      isReady,
      catalog: serviceClient(CatalogService, config.CATALOG_URL, clientOptions),
      keys: serviceClient(KeysService, config.KEYS_URL, clientOptions),
      runs: serviceClient(RunsService, config.RUNS_URL, clientOptions),
      billing: serviceClient(BillingService, config.BILLING_URL, clientOptions),
      automation: serviceClient(AutomationService, config.AUTOMATION_URL, clientOptions),
    });
    onShutdown(() => wired.stop());
    // The process's own gauge (one Prometheus registry), so registered here, not in the wiring.
    registerWatchStreamsGauge(() => wired.openStreams());
    await serveHttp(wired.app, {
      port: config.HTTP_PORT,
      host: config.HOST,
      logger,
      shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
      onShutdown,
      limits: httpLimitsOf(config),
    });
    // At SIGTERM, live streams end at once (browsers reopen them on another replica), so they
    // never hold the drain open.
    onStopping(() => wired.endStreams());
    return wired.services;
  },
});
