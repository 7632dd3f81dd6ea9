import { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { runService, serviceClient } from "@testrun/kit";
import { configSchema } from "./config.js";
import { database } from "./db/index.js";
import { wireCatalog } from "./wiring.js";

await runService({
  name: "catalog",
  config: configSchema,
  database,
  redis: true,
  setup: ({ config, orm, redis, logger, onShutdown }) => {
    const catalog = wireCatalog({
      config,
      orm,
      redis,
      logger,
      keys: serviceClient(KeysService, config.KEYS_URL, { token: config.SERVICE_TOKEN, timeoutMs: 3_000 }),
      runs: serviceClient(RunsService, config.RUNS_URL, { token: config.SERVICE_TOKEN, timeoutMs: 10_000 }),
      billing: serviceClient(BillingService, config.BILLING_URL, {
        token: config.SERVICE_TOKEN,
        timeoutMs: 3_000,
      }),
    });
    onShutdown(() => catalog.stop(), "stopping the outbox and the access epoch");
    return catalog.services;
  },
});
