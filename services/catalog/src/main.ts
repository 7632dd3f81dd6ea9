import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  announceAccessChange,
  bind,
  keepAccessEpoch,
  runService,
  serviceClient,
  VariablesGrants,
} from "@testrun/kit";
import { VariableCipher } from "./cipher.js";
import { configSchema } from "./config.js";
import { database } from "./db/index.js";
import { Outbox } from "./outbox.js";
import { catalogService, executorMethods, nulAllowed } from "./service.js";
import { Database } from "./sql.js";

await runService({
  name: "catalog",
  config: configSchema,
  database,
  redis: true,
  setup: ({ config, orm, redis, logger, onShutdown }) => {
    const db = new Database(orm);
    const keys = serviceClient(KeysService, config.KEYS_URL, {
      token: config.SERVICE_TOKEN,
      timeoutMs: 3_000,
    });
    const runs = serviceClient(RunsService, config.RUNS_URL, {
      token: config.SERVICE_TOKEN,
      timeoutMs: 10_000,
    });
    const outbox = new Outbox(db, { keys, runs }, logger, config.KEYS_RETRY_MS);
    outbox.start();
    onShutdown(() => outbox.stop());
    onShutdown(keepAccessEpoch(redis, logger));
    if (!config.VARIABLES_KEY)
      logger.warn("VARIABLES_KEY is not set: variable values can be neither stored nor read");
    const cipher = config.VARIABLES_KEY ? new VariableCipher(config.VARIABLES_KEY) : undefined;
    return [
      bind(
        CatalogService,
        catalogService({
          db,
          outbox,
          announceAccessChange: () => announceAccessChange(redis, logger),
          cipher,
          logger,
          variablesGrants: new VariablesGrants(config.SERVICE_TOKEN),
        }),
        executorMethods,
        nulAllowed,
      ),
    ];
  },
});
