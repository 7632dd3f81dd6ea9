import { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { bind, runService, serviceClient } from "@testrun/kit";
import { configSchema } from "./config.js";
import { database } from "./db/index.js";
import { Ledger } from "./ledger.js";
import { billingService } from "./service.js";

await runService({
  name: "billing",
  config: configSchema,
  database,
  setup: ({ config, orm }) => {
    const catalog = serviceClient(CatalogService, config.CATALOG_URL, { token: config.SERVICE_TOKEN });
    return [bind(BillingService, billingService(new Ledger(orm), catalog))];
  },
});
