import type { Client } from "@connectrpc/connect";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { bind, type Logger, type Orm, type ServiceWiring } from "@testrun/kit";
import type { Redis } from "ioredis";
import { Access } from "./access.js";
import type { Config } from "./config.js";
import { keysService } from "./service.js";
import { KeyStore } from "./store.js";

export { configSchema } from "./config.js";
export { database } from "./db/index.js";

/** What the keys service is made of: its configuration, database, Redis, log, and the catalog. */
export interface KeysDependencies {
  config: Config;
  orm: Orm;
  redis: Redis;
  logger: Logger;
  /** Authorizes member and operator actors (CheckAccess). */
  catalog: Client<typeof CatalogService>;
}

/** The keys service's wiring, for main.ts and tests alike. It runs no background work. */
export function wireKeys({ config, orm, redis, logger, catalog }: KeysDependencies): ServiceWiring {
  const service = keysService({
    store: new KeyStore(orm),
    access: new Access(catalog),
    redis,
    keyCacheSecret: config.KEY_CACHE_SECRET,
    logger,
  });
  return {
    // A presented secret is only ever fingerprinted, never stored or compared as text: any text
    // is an answer of UNKNOWN there, NUL included (keys.proto, VerifyKey).
    services: [bind(KeysService, service, [], ["testrun.keys.v1.VerifyKeyRequest.secret"])],
    async stop() {},
  };
}
