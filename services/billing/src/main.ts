import { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import {
  baseConfigSchema,
  bind,
  portVar,
  postgresUrl,
  runService,
  serviceClient,
  serviceUrl,
} from "@testrun/kit";
import { database } from "./db/index.js";
import { Ledger } from "./ledger.js";
import { billingService } from "./service.js";

await runService({
  name: "billing",
  config: baseConfigSchema.extend({
    PORT: portVar(7103),
    DATABASE_URL: postgresUrl,
    /** The catalog, which authorizes actors (default: its local port). */
    CATALOG_URL: serviceUrl.default("http://127.0.0.1:7102"),
  }),
  database,
  setup: ({ config, orm }) => {
    const catalog = serviceClient(CatalogService, config.CATALOG_URL, { token: config.SERVICE_TOKEN });
    return [bind(BillingService, billingService(new Ledger(orm), catalog))];
  },
});
