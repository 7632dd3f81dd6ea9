import { Code, ConnectError } from "@connectrpc/connect";
import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { fingerprintOf, isIdOf, requireActor } from "@testrun/kit";
import { expiryDurationMs } from "../key-state.js";
import { contentTokenPrefix, displayPrefixOf, generateSecret, secretPrefix } from "../secret.js";
import { maxActiveKeysPerProject } from "../store.js";
import { type Handlers, invalid, type KeysDeps } from "./context.js";
import { expiryChoices, kindChoices, toProto } from "./key-proto.js";
import { tombstone } from "./tombstones.js";

const maxNameLength = 100;

/** A key name: trimmed, 1 to 100 code points. */
function keyName(raw: string): string {
  const name = raw.trim();
  const length = [...name].length;
  if (length < 1 || length > maxNameLength) throw invalid(`name must be 1 to ${maxNameLength} characters`);
  return name;
}

/** What a kind is called in messages. */
const kindNoun = { api: "keys", content: "content tokens" } as const;

/** A request's KeyKind as stored; a value this build does not know is refused, not taken for a key. */
function kindOf(value: number): "api" | "content" {
  const kind = kindChoices[value as keyof typeof kindChoices];
  if (!kind) throw invalid("kind is not a known KeyKind value");
  return kind;
}

/**
 * CreateKey, ListKeys, RevokeKey: a project's keys and content tokens as members and operators
 * manage them (a content token is a key of kind `content`: same lifecycle, another prefix). The
 * secret exists only inside CreateKey (generated, returned once), never in a log line or an error.
 */
export function manageHandlers(deps: KeysDeps): Handlers {
  const { store, access, logger } = deps;
  return {
    async createKey(req) {
      const kind = requireActor(req.actor);
      if (kind === "apiKey")
        throw new ConnectError("an API key cannot create API keys", Code.PermissionDenied);
      if (!req.projectId) throw invalid("project_id is required");
      const name = keyName(req.name);
      const expiry = expiryChoices[req.expiry];
      if (!expiry) throw invalid("expiry is not a known KeyExpiry value");
      const keyKind = kindOf(req.kind);
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

      const secret = generateSecret(keyKind === "content" ? contentTokenPrefix : secretPrefix);
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
        kind: keyKind,
      });
      if (outcome.kind === "too_many")
        throw new ConnectError(
          `the project already has ${maxActiveKeysPerProject} active ${kindNoun[keyKind]}: revoke one first`,
          Code.ResourceExhausted,
        );
      if (outcome.kind === "creator_lost_rights")
        throw new ConnectError(
          `creator ${creator} has lost the rights to create keys`,
          Code.PermissionDenied,
        );
      logger.info({ keyId: outcome.key.id, projectId: req.projectId, expiry, kind: keyKind }, "key created");
      return { key: toProto(outcome.key, new Date()), secret };
    },

    async listKeys(req) {
      const kind = kindOf(req.kind);
      await access.check(req.actor, req.projectId, Permission.READ_SETTINGS);
      const now = new Date();
      const keys = await store.list(req.projectId, kind, req.includeRevoked);
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
      await tombstone(deps, [{ id: key.id, fingerprint: key.fingerprint, revoked: true }]);
      logger.info({ keyId: key.id, projectId: key.projectId }, "key revoked");
      return { key: toProto(key, now) };
    },
  };
}
