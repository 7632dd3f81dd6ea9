import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { runService, serviceClient } from "@testrun/kit";
import { configSchema } from "./config.js";
import { database } from "./db/index.js";
import { wireBilling } from "./wiring.js";

await runService({
  name: "billing",
  config: configSchema,
  database,
  setup: ({ config, orm, onShutdown }) => {
    const billing = wireBilling({
      orm,
      catalog: serviceClient(CatalogService, config.CATALOG_URL, { token: config.SERVICE_TOKEN }),
    });
    onShutdown(() => billing.stop());
    return billing.services;
  },
});
