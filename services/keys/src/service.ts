import type { ServiceImpl } from "@connectrpc/connect";
import { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { accessLossHandlers } from "./rpc/access-losses.js";
import type { KeysDeps } from "./rpc/context.js";
import { manageHandlers } from "./rpc/manage.js";
import { verifyHandlers } from "./rpc/verify.js";

export type { KeysDeps } from "./rpc/context.js";

/**
 * Every method of KeysService, from its handler groups (rpc/). Secrets exist only inside CreateKey
 * (generated, returned once) and VerifyKey (presented, hashed at once): neither ever passes one to
 * a log line or an error.
 */
export function keysService(deps: KeysDeps): ServiceImpl<typeof KeysService> {
  const handlers = {
    ...manageHandlers(deps),
    ...verifyHandlers(deps),
    ...accessLossHandlers(deps),
  } as Record<string, unknown>;
  // A method left out would answer UNIMPLEMENTED: refuse to start instead.
  const missing = KeysService.methods.filter((method) => !handlers[method.localName]);
  if (missing.length > 0)
    throw new Error(`KeysService methods not implemented: ${missing.map((m) => m.name)}`);
  return handlers as unknown as ServiceImpl<typeof KeysService>;
}
