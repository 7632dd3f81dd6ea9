import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { runService, serviceClient } from "@testrun/kit";
import { configSchema } from "./config.js";
import { database } from "./db/index.js";
import { wireAutomation } from "./wiring.js";

await runService({
  name: "automation",
  config: configSchema,
  database,
  setup: ({ config, orm, logger, onStopping, onShutdown }) => {
    const token = { token: config.SERVICE_TOKEN };
    const automation = wireAutomation({
      config,
      orm,
      logger,
      catalog: serviceClient(CatalogService, config.CATALOG_URL, token),
      runs: serviceClient(RunsService, config.RUNS_URL, token),
    });
    onStopping(() => automation.stopping());
    onShutdown(() => automation.stop(), "closing webhook connections");
    return automation.services;
  },
});
