import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import type { Logger } from "@testrun/kit";
import type { Redis } from "ioredis";
import type { Access } from "../access.js";
import type { KeyStore } from "../store.js";

/** What every group of handlers works with. */
export interface KeysDeps {
  store: KeyStore;
  access: Access;
  redis: Redis;
  /** KEY_CACHE_SECRET: seals the cache entries, so that the gateway trusts only what we wrote. */
  keyCacheSecret: string;
  logger: Logger;
}

/** Some of KeysService's methods; service.ts puts the groups together. */
export type Handlers = Partial<ServiceImpl<typeof KeysService>>;

export const invalid = (message: string) => new ConnectError(message, Code.InvalidArgument);
