import type { ServiceImpl } from "@connectrpc/connect";
import { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { fromHandlerGroups } from "@testrun/kit";
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
  return fromHandlerGroups(KeysService, manageHandlers(deps), verifyHandlers(deps), accessLossHandlers(deps));
}
