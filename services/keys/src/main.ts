import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { runService, serviceClient } from "@testrun/kit";
import { configSchema } from "./config.js";
import { database } from "./db/index.js";
import { wireKeys } from "./wiring.js";

await runService({
  name: "keys",
  config: configSchema,
  database,
  redis: true,
  setup: ({ config, orm, redis, logger, onShutdown }) => {
    const keys = wireKeys({
      config,
      orm,
      redis,
      logger,
      catalog: serviceClient(CatalogService, config.CATALOG_URL, { token: config.SERVICE_TOKEN }),
    });
    onShutdown(() => keys.stop());
    return keys.services;
  },
});
