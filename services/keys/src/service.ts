import { create } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import {
  type ApiKey,
  ApiKeySchema,
  KeyExpiry,
  KeyState,
  type KeysService,
  VerifyKeyResult,
} from "@testrun/gen/testrun/keys/v1/keys_pb";
import {
  cacheValidKey,
  fingerprintOf,
  isIdOf,
  type KeyTombstone,
  type Logger,
  requireActor,
  tombstoneKeys,
} from "@testrun/kit";
import type { Redis } from "ioredis";
import type { Access } from "./access.js";
import type { KeyExpiryChoice } from "./db/entities.js";
import { disabledAtOf, expiryDurationMs, type KeyStateName, keyState, type StoredKey } from "./key-state.js";
import { displayPrefixOf, generateSecret, isWellFormedSecret } from "./secret.js";
import { type KeyStore, type KilledKey, lastUseResolutionMs, maxActiveKeysPerProject } from "./store.js";

export interface KeysDeps {
  store: KeyStore;
  access: Access;
  redis: Redis;
  /** KEY_CACHE_SECRET: seals the cache entries, so that the gateway trusts only what we wrote. */
  keyCacheSecret: string;
  logger: Logger;
}

const maxNameLength = 100;
const maxUsesPerCall = 1_000;

const expiryChoices: Record<KeyExpiry, KeyExpiryChoice | undefined> = {
  [KeyExpiry.UNSPECIFIED]: "90d",
  [KeyExpiry.DAYS_30]: "30d",
  [KeyExpiry.DAYS_90]: "90d",
  [KeyExpiry.YEAR_1]: "1y",
  [KeyExpiry.NEVER]: "never",
};
const expiryValues: Record<KeyExpiryChoice, KeyExpiry> = {
  "30d": KeyExpiry.DAYS_30,
  "90d": KeyExpiry.DAYS_90,
  "1y": KeyExpiry.YEAR_1,
  never: KeyExpiry.NEVER,
};
const states: Record<KeyStateName, KeyState> = {
  active: KeyState.ACTIVE,
  expired: KeyState.EXPIRED,
  revoked: KeyState.REVOKED,
  creator_lost_rights: KeyState.CREATOR_LOST_RIGHTS,
};
const verifyResults: Record<KeyStateName, VerifyKeyResult> = {
  active: VerifyKeyResult.VALID,
  expired: VerifyKeyResult.EXPIRED,
  revoked: VerifyKeyResult.REVOKED,
  creator_lost_rights: VerifyKeyResult.CREATOR_LOST_RIGHTS,
};

const invalid = (message: string) => new ConnectError(message, Code.InvalidArgument);
const stamp = (date: Date | null): Timestamp | undefined => (date ? timestampFromDate(date) : undefined);

function toProto(key: StoredKey, now: Date): ApiKey {
  const state = keyState(key, now);
  return create(ApiKeySchema, {
    id: key.id,
    projectId: key.projectId,
    name: key.name,
    displayPrefix: key.displayPrefix,
    createdAt: timestampFromDate(key.createdAt),
    lastUsedAt: stamp(key.lastUsedAt),
    expiresAt: stamp(key.expiresAt),
    creatorMemberId: key.creatorMemberId,
    state: states[state],
    expiry: expiryValues[key.expiry],
    revokedAt: state === "revoked" ? stamp(key.revokedAt) : undefined,
    disabledAt: state === "creator_lost_rights" ? stamp(disabledAtOf(key)) : undefined,
  });
}

/** A key name: trimmed, 1 to 100 code points. */
function keyName(raw: string): string {
  const name = raw.trim();
  const length = [...name].length;
  if (length < 1 || length > maxNameLength) throw invalid(`name must be 1 to ${maxNameLength} characters`);
  return name;
}

/**
 * KeysService. Secrets exist only inside CreateKey (generated, returned once) and VerifyKey
 * (presented, hashed at once): neither ever passes one to a log line or an error.
 */
export function keysService({
  store,
  access,
  redis,
  keyCacheSecret,
  logger,
}: KeysDeps): ServiceImpl<typeof KeysService> {
  /**
   * Overwrites the gateway's cache entries of keys that just stopped working. Runs after the
   * database commit and before the RPC answers, so the request after the answer is refused. When
   * Redis fails the change stays committed and the call fails with UNAVAILABLE: a retry (they
   * are all idempotent) writes the tombstones again.
   */
  const tombstone = async (keys: KilledKey[]) => {
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
  };

  return {
    async createKey(req) {
      const kind = requireActor(req.actor);
      if (kind === "apiKey")
        throw new ConnectError("an API key cannot create API keys", Code.PermissionDenied);
      if (!req.projectId) throw invalid("project_id is required");
      const name = keyName(req.name);
      const expiry = expiryChoices[req.expiry];
      if (!expiry) throw invalid("expiry is not a known KeyExpiry value");
      let creator: string;
      if (req.actor?.kind.case === "memberId") {
        creator = req.actor.kind.value;
        if (req.creatorMemberId !== undefined && req.creatorMemberId !== creator)
          throw invalid("creator_member_id must be the acting member (or be omitted)");
      } else {
        if (!req.creatorMemberId)
          throw invalid("creator_member_id is required when the actor is an operator");
        creator = req.creatorMemberId;
      }

      // The creation time is taken before the catalog approves the creator: if the creator loses
      // rights after that approval, the loss (at or after this time) kills the key too, even
      // when it is stored after the keys service heard of the loss.
      const createdAt = new Date();
      const organizationId = await access.check(req.actor, req.projectId, Permission.EDIT);
      if (kind === "operator") await access.checkCreator(creator, req.projectId);

      const secret = generateSecret();
      const lifetime = expiryDurationMs[expiry];
      const outcome = await store.create({
        projectId: req.projectId,
        organizationId,
        name,
        displayPrefix: displayPrefixOf(secret),
        fingerprint: fingerprintOf(secret),
        creatorMemberId: creator,
        createdAt,
        expiry,
        expiresAt: lifetime === null ? null : new Date(createdAt.getTime() + lifetime),
      });
      if (outcome.kind === "too_many")
        throw new ConnectError(
          `the project already has ${maxActiveKeysPerProject} active keys: revoke one first`,
          Code.ResourceExhausted,
        );
      if (outcome.kind === "creator_lost_rights")
        throw new ConnectError(
          `creator ${creator} has lost the rights to create keys`,
          Code.PermissionDenied,
        );
      logger.info({ keyId: outcome.key.id, projectId: req.projectId, expiry }, "key created");
      return { key: toProto(outcome.key, new Date()), secret };
    },

    async listKeys(req) {
      await access.check(req.actor, req.projectId, Permission.READ_SETTINGS);
      const now = new Date();
      const keys = await store.list(req.projectId, req.includeRevoked);
      return { keys: keys.map((key) => toProto(key, now)) };
    },

    async revokeKey(req) {
      await access.check(req.actor, req.projectId, Permission.EDIT);
      if (!req.keyId) throw invalid("key_id is required");
      // An id of the wrong shape is an unknown id; it is neither looked up nor echoed, in case
      // it is a secret pasted where the id belongs.
      if (!isIdOf("key", req.keyId))
        throw new ConnectError(`the key_id given is not a key of project ${req.projectId}`, Code.NotFound);
      const now = new Date();
      const key = await store.revoke(req.projectId, req.keyId, now);
      if (!key)
        throw new ConnectError(`key ${req.keyId} not found in project ${req.projectId}`, Code.NotFound);
      // Also when it was revoked before: writing the tombstone again is harmless and repairs one
      // that an earlier attempt failed to write.
      await tombstone([{ id: key.id, fingerprint: key.fingerprint, revoked: true }]);
      logger.info({ keyId: key.id, projectId: key.projectId }, "key revoked");
      return { key: toProto(key, now) };
    },

    async verifyKey(req) {
      // A malformed secret (wrong prefix, length, alphabet or checksum) cannot be a key of ours.
      if (!isWellFormedSecret(req.secret)) return { result: VerifyKeyResult.UNKNOWN };
      const fingerprint = fingerprintOf(req.secret);
      const key = await store.findByFingerprint(fingerprint);
      if (!key) return { result: VerifyKeyResult.UNKNOWN };
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

    async disableKeysOfMember(req) {
      if (!req.memberId) throw invalid("member_id is required");
      if (!req.lostAt) throw invalid("lost_at is required");
      const { disabled, kill } = await store.disableMember(
        req.memberId,
        timestampDate(req.lostAt),
        new Date(),
      );
      await tombstone(kill);
      if (disabled > 0)
        logger.info({ memberId: req.memberId, disabled }, "keys of a member who lost rights disabled");
      return { disabledCount: disabled };
    },

    async revokeProjectKeys(req) {
      if (!req.projectId) throw invalid("project_id is required");
      const { revoked, kill } = await store.revokeProject(req.projectId, new Date());
      await tombstone(kill);
      if (revoked > 0)
        logger.info({ projectId: req.projectId, revoked }, "keys of a deleted project revoked");
      return { revokedCount: revoked };
    },
  };

  /**
   * A revoked key, or one whose creator lost rights, is dead for good: its tombstone is written
   * again (the first one may have lived out its TTL), so that the gateway refuses it from Redis
   * instead of asking again on every request. Best effort, like the valid entry.
   */
  async function refuseFromCache(key: StoredKey, fingerprint: string, state: KeyTombstone["state"]) {
    try {
      await tombstoneKeys(redis, keyCacheSecret, [{ fingerprint, tombstone: { state, keyId: key.id } }]);
    } catch (err) {
      logger.warn({ err, keyId: key.id }, "could not cache a refused key");
    }
  }

  /**
   * After a VALID verification: caches the key for the gateway, and moves last_used_at forward if
   * it is more than a minute old. Neither may fail the verification: the cache only saves later
   * calls, and last use is bookkeeping, so failures are logged and the answer stands.
   */
  async function recordVerifiedUse(key: StoredKey, fingerprint: string, now: Date): Promise<void> {
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
  }
}
