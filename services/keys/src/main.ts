import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { bind, runService, serviceClient } from "@testrun/kit";
import { Access } from "./access.js";
import { configSchema } from "./config.js";
import { database } from "./db/index.js";
import { keysService } from "./service.js";
import { KeyStore } from "./store.js";

await runService({
  name: "keys",
  config: configSchema,
  database,
  redis: true,
  setup: ({ config, orm, redis, logger }) => {
    const catalog = serviceClient(CatalogService, config.CATALOG_URL, { token: config.SERVICE_TOKEN });
    const service = keysService({
      store: new KeyStore(orm),
      access: new Access(catalog),
      redis,
      keyCacheSecret: config.KEY_CACHE_SECRET,
      logger,
    });
    // A presented secret is only ever fingerprinted, never stored or compared as text: any text
    // is an answer of UNKNOWN there, NUL included (keys.proto, VerifyKey).
    return [bind(KeysService, service, [], ["testrun.keys.v1.VerifyKeyRequest.secret"])];
  },
});
