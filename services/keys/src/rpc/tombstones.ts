import { Code, ConnectError } from "@connectrpc/connect";
import { tombstoneKeys } from "@testrun/kit";
import type { KilledKey } from "../store.js";
import type { KeysDeps } from "./context.js";

/**
 * Overwrites the gateway's cache entries of keys that just stopped working. Runs after the
 * database commit and before the RPC answers, so the request after the answer is refused. When
 * Redis fails the change stays committed and the call fails with UNAVAILABLE: a retry (they
 * are all idempotent) writes the tombstones again.
 */
export async function tombstone(
  { redis, keyCacheSecret, logger }: KeysDeps,
  keys: readonly KilledKey[],
): Promise<void> {
  try {
    await tombstoneKeys(
      redis,
      keyCacheSecret,
      keys.map((k) => ({
        fingerprint: k.fingerprint,
        tombstone: { state: k.revoked ? "revoked" : "creator_lost_rights", keyId: k.id },
      })),
    );
  } catch (err) {
    logger.error({ err, keys: keys.map((k) => k.id) }, "could not write key cache tombstones");
    throw new ConnectError(
      "the change is saved, but the gateway's key cache could not be updated: retry the call",
      Code.Unavailable,
    );
  }
}
