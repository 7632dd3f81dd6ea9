import type { Client } from "@connectrpc/connect";
import { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { bind, type Orm, type ServiceWiring } from "@testrun/kit";
import { Ledger } from "./ledger.js";
import { billingService } from "./service.js";

export { configSchema } from "./config.js";
export { database } from "./db/index.js";

/** What the billing service is made of: its database and the catalog. */
export interface BillingDependencies {
  orm: Orm;
  /** Authorizes actors (CheckAccess); charge and refund never consult it. */
  catalog: Client<typeof CatalogService>;
}

/** The billing service's wiring, for main.ts and tests alike. It runs no background work. */
export function wireBilling({ orm, catalog }: BillingDependencies): ServiceWiring {
  return { services: [bind(BillingService, billingService(new Ledger(orm), catalog))], async stop() {} };
}
