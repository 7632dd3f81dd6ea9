import type { Client } from "@connectrpc/connect";
import type { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import type { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  announceAccessChange,
  bind,
  keepAccessEpoch,
  type Logger,
  type Orm,
  type ServiceWiring,
  VariablesGrants,
} from "@testrun/kit";
import type { Redis } from "ioredis";
import { VariableCipher } from "./cipher.js";
import type { Config } from "./config.js";
import { Outbox } from "./outbox.js";
import { catalogService, executorMethods, nulAllowed } from "./service.js";
import { Database } from "./sql.js";
import { VariableReadsAudit } from "./variable-reads-audit.js";

export { configSchema } from "./config.js";
export { database } from "./db/index.js";

/** What the catalog is made of: its configuration, database, Redis, log, and the services it tells. */
export interface CatalogDependencies {
  config: Config;
  orm: Orm;
  redis: Redis;
  logger: Logger;
  /** Told when a member loses rights or a project is deleted (through the outbox). */
  keys: Client<typeof KeysService>;
  /** Told when a project is deleted, so its artifacts go too (through the outbox). */
  runs: Client<typeof RunsService>;
  /** Asked for a new project's credits (NEW_PROJECT_CREDITS, through the outbox). */
  billing: Client<typeof BillingService>;
}

/**
 * The catalog's wiring, for main.ts and tests alike: CatalogService, the outbox that delivers its
 * notifications (started here), and the access epoch it keeps (docs/security.md, "Cached grants").
 */
export function wireCatalog({
  config,
  orm,
  redis,
  logger,
  keys,
  runs,
  billing,
}: CatalogDependencies): ServiceWiring {
  const db = new Database(orm);
  const outbox = new Outbox(db, { keys, runs, billing }, logger, config.KEYS_RETRY_MS);
  outbox.start();
  const stopKeepingEpoch = keepAccessEpoch(redis, logger);
  if (!config.VARIABLES_KEY)
    logger.warn("VARIABLES_KEY is not set: variable values can be neither stored nor read");
  const cipher = config.VARIABLES_KEY ? new VariableCipher(config.VARIABLES_KEY) : undefined;
  const variableReads = new VariableReadsAudit(logger, config.VARIABLE_READS_AUDIT_MS);
  return {
    services: [
      bind(
        CatalogService,
        catalogService({
          db,
          outbox,
          announceAccessChange: () => announceAccessChange(redis, logger),
          cipher,
          logger,
          variablesGrants: new VariablesGrants(config.SERVICE_TOKEN),
          variableReads,
          newProjectCredits: config.NEW_PROJECT_CREDITS,
          newProjectGrantsPerOrganization: config.NEW_PROJECT_GRANTS_PER_ORGANIZATION,
        }),
        executorMethods,
        nulAllowed,
      ),
    ],
    async stop() {
      variableReads.stop();
      await stopKeepingEpoch();
      await outbox.stop();
    },
  };
}
