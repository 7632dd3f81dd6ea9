import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import {
  baseConfigSchema,
  bind,
  portVar,
  postgresUrl,
  redisUrl,
  runService,
  serviceClient,
  serviceUrl,
} from "@testrun/kit";
import { Access } from "./access.js";
import { database } from "./db/index.js";
import { keysService } from "./service.js";
import { KeyStore } from "./store.js";

await runService({
  name: "keys",
  config: baseConfigSchema.extend({
    PORT: portVar(7101),
    DATABASE_URL: postgresUrl,
    /** Where the verified-key cache lives, shared with the gateway (services/kit/src/key-cache.ts). */
    REDIS_URL: redisUrl,
    /** The catalog, which authorizes member and operator actors (CheckAccess). */
    CATALOG_URL: serviceUrl.default("http://127.0.0.1:7102"),
  }),
  database,
  redis: true,
  setup: ({ config, orm, redis, logger }) => {
    const catalog = serviceClient(CatalogService, config.CATALOG_URL, { token: config.SERVICE_TOKEN });
    const service = keysService({ store: new KeyStore(orm), access: new Access(catalog), redis, logger });
    return [bind(KeysService, service)];
  },
});
