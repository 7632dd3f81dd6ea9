import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { VerifyKeyResult } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { cacheValidKey, fingerprintOf, isIdOf, type KeyTombstone, tombstoneKeys } from "@testrun/kit";
import { type KeyStateName, keyState, type StoredKey } from "../key-state.js";
import { contentTokenPrefix, isWellFormedSecret } from "../secret.js";
import { lastUseResolutionMs } from "../store.js";
import { type Handlers, invalid, type KeysDeps } from "./context.js";
import { stamp } from "./key-proto.js";

const maxUsesPerCall = 1_000;

const verifyResults: Record<KeyStateName, VerifyKeyResult> = {
  active: VerifyKeyResult.VALID,
  expired: VerifyKeyResult.EXPIRED,
  revoked: VerifyKeyResult.REVOKED,
  creator_lost_rights: VerifyKeyResult.CREATOR_LOST_RIGHTS,
};

/**
 * VerifyKey, VerifyContentToken, RecordKeyUse: the gateway's questions about presented keys. A presented secret is
 * hashed at once and never passed to a log line or an error.
 */
export function verifyHandlers({ store, redis, keyCacheSecret, logger }: KeysDeps): Handlers {
  /**
   * A revoked key, or one whose creator lost rights, is dead for good: its tombstone is written
   * again (the first one may have lived out its TTL), so that the gateway refuses it from Redis
   * instead of asking again on every request. Best effort, like the valid entry.
   */
  const refuseFromCache = async (key: StoredKey, fingerprint: string, state: KeyTombstone["state"]) => {
    try {
      await tombstoneKeys(redis, keyCacheSecret, [{ fingerprint, tombstone: { state, keyId: key.id } }]);
    } catch (err) {
      logger.warn({ err, keyId: key.id }, "could not cache a refused key");
    }
  };

  /**
   * After a VALID verification: caches the key for the gateway, and moves last_used_at forward if
   * it is more than a minute old. Neither may fail the verification: the cache only saves later
   * calls, and last use is bookkeeping, so failures are logged and the answer stands.
   */
  const recordVerifiedUse = async (key: StoredKey, fingerprint: string, now: Date) => {
    try {
      await cacheValidKey(redis, keyCacheSecret, fingerprint, {
        keyId: key.id,
        projectId: key.projectId,
        creatorMemberId: key.creatorMemberId,
        keyCreatedAt: key.createdAt.toISOString(),
        expiresAt: key.expiresAt ? key.expiresAt.toISOString() : null,
      });
    } catch (err) {
      logger.warn({ err, keyId: key.id }, "could not cache a verified key");
    }
    // Decided from the row just read, so a key used again within the minute costs no statement;
    // the update re-checks the condition, so concurrent verifications still write once.
    if (key.lastUsedAt && now.getTime() - key.lastUsedAt.getTime() < lastUseResolutionMs) return;
    try {
      await store.touch(key.id, now);
    } catch (err) {
      logger.warn({ err, keyId: key.id }, "could not record a key's last use");
    }
  };

  return {
    async verifyKey(req) {
      // A malformed secret (wrong prefix, length, alphabet or checksum) cannot be a key of ours.
      if (!isWellFormedSecret(req.secret)) return { result: VerifyKeyResult.UNKNOWN };
      const fingerprint = fingerprintOf(req.secret);
      const key = await store.findByFingerprint(fingerprint);
      // A content token is never an API key (its prefix already says so; the row says it again).
      if (key?.kind !== "api") return { result: VerifyKeyResult.UNKNOWN };
      const now = new Date();
      const state = keyState(key, now);
      if (state === "active") await recordVerifiedUse(key, fingerprint, now);
      else if (state === "revoked" || state === "creator_lost_rights")
        await refuseFromCache(key, fingerprint, state);
      return {
        result: verifyResults[state],
        keyId: key.id,
        projectId: key.projectId,
        creatorMemberId: key.creatorMemberId,
        keyCreatedAt: timestampFromDate(key.createdAt),
        expiresAt: stamp(key.expiresAt),
      };
    },

    async verifyContentToken(req) {
      // Only a trc_ secret can be a content token: an API key presented here is unknown.
      if (!isWellFormedSecret(req.secret, contentTokenPrefix)) return { result: VerifyKeyResult.UNKNOWN };
      const token = await store.findByFingerprint(fingerprintOf(req.secret));
      if (token?.kind !== "content") return { result: VerifyKeyResult.UNKNOWN };
      const now = new Date();
      const state = keyState(token, now);
      // Not cached anywhere: every import asks here, so revocation and loss of rights count at once.
      if (
        state === "active" &&
        !(token.lastUsedAt && now.getTime() - token.lastUsedAt.getTime() < lastUseResolutionMs)
      ) {
        try {
          await store.touch(token.id, now);
        } catch (err) {
          logger.warn({ err, keyId: token.id }, "could not record a content token's last use");
        }
      }
      return {
        result: verifyResults[state],
        tokenId: token.id,
        projectId: token.projectId,
        creatorMemberId: token.creatorMemberId,
        expiresAt: stamp(token.expiresAt),
      };
    },

    async recordKeyUse(req) {
      if (req.uses.length > maxUsesPerCall) throw invalid(`at most ${maxUsesPerCall} uses per call`);
      const now = new Date();
      const uses = req.uses.map((use, i) => {
        if (!use.usedAt) throw invalid(`uses[${i}].used_at is required`);
        const usedAt = timestampDate(use.usedAt);
        // A caller's clock running ahead must not move last_used_at into the future.
        return { keyId: use.keyId, usedAt: usedAt > now ? now : usedAt };
      });
      // Ids of the wrong shape are unknown ids: ignored, like ids of keys that do not exist.
      await store.recordUses(uses.filter((use) => isIdOf("key", use.keyId)));
      return {};
    },
  };
}
