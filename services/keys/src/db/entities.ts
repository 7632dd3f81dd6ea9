import { defineEntity, p } from "@mikro-orm/core";

// Project, organization and member ids belong to the catalog's data: plain text columns, no foreign
// keys across schemas. Field names follow proto/testrun/keys/v1/keys.proto.

/** Lifetimes a key can be created with (docs/keys.md); `never` leaves `expiresAt` null. */
export const KEY_EXPIRIES = ["30d", "90d", "1y", "never"] as const;
export type KeyExpiryChoice = (typeof KEY_EXPIRIES)[number];

/**
 * What a key is for (keys.proto, KeyKind): `api`, a project API key (`trk_`), or `content`, a
 * content token (`trc_`) that only imports content. Both live, expire, are revoked and die with
 * their creator's rights alike, so they share the table; every read says which kind it wants.
 */
export const KEY_KINDS = ["api", "content"] as const;
export type KeyKindName = (typeof KEY_KINDS)[number];

/**
 * A project API key. Only the SHA-256 fingerprint of the secret is stored, never the secret.
 *
 * A key works while `revokedAt` and `disabledAt` are null, `expiresAt` (null = never) is in the
 * future, and its creator has not lost Editor-or-above rights after `createdAt` (see
 * MemberRightsLoss; the catalog also refuses such keys itself).
 */
export const ApiKey = defineEntity({
  name: "ApiKey",
  tableName: "api_keys",
  properties: {
    id: p.text().primary(),
    projectId: p.text(),
    organizationId: p.text(),
    /** 1 to 100 characters; not unique. */
    name: p.text(),
    /** First 12 characters of the secret (`trk_` + 8), shown followed by `…`. */
    displayPrefix: p.text(),
    /** Lower-case hex SHA-256 of the whole secret: what a presented secret is looked up by. */
    fingerprint: p.text(),
    creatorMemberId: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
    /** The lifetime chosen at creation (ApiKey.expiry of the proto). */
    expiry: p.enum(KEY_EXPIRIES),
    /** Null: never expires. */
    expiresAt: p.datetime().nullable(),
    /** Coalesced: written at most once a minute per key, and only ever moved forward. */
    lastUsedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    /** When the key stopped working because its creator lost Editor-or-above rights; never cleared. */
    disabledAt: p.datetime().nullable(),
    /** Keys stored before content tokens existed are API keys. */
    kind: p.enum(KEY_KINDS).default("api"),
  },
  uniques: [
    // VerifyKey is one lookup by fingerprint; two keys can never share a secret.
    { name: "api_keys_fingerprint_unique", properties: ["fingerprint"] },
  ],
  indexes: [
    // ListKeys (a project's keys by creation; a btree reads either direction), the 100-active-keys
    // count of CreateKey, and RevokeProjectKeys.
    { name: "api_keys_project_created_index", properties: ["projectId", "createdAt", "id"] },
    // DisableKeysOfMember: every key a member created before losing rights.
    { name: "api_keys_creator_member_index", properties: ["creatorMemberId", "createdAt"] },
  ],
  checks: [
    { name: "api_keys_name_length", expression: "char_length(name) >= 1 and char_length(name) <= 100" },
    { name: "api_keys_display_prefix_length", expression: "char_length(display_prefix) = 12" },
    // A secret's prefix says its kind, so the list can never show a trc_ key as an API key.
    {
      name: "api_keys_display_prefix_of_kind",
      expression: "left(display_prefix, 4) = case kind when 'api' then 'trk_' else 'trc_' end",
    },
    { name: "api_keys_fingerprint_sha256_hex", expression: "fingerprint ~ '^[0-9a-f]{64}$'" },
    // "never" and only "never" has no expiry time, and an expiry lies after creation.
    { name: "api_keys_expiry_matches_expires_at", expression: "(expiry = 'never') = (expires_at is null)" },
    { name: "api_keys_expires_after_creation", expression: "expires_at > created_at" },
  ],
});

/**
 * The latest time each member lost Editor-or-above rights, as reported by the catalog
 * (DisableKeysOfMember). Kept so that a key whose creation was authorized before the loss but
 * stored after the report is caught too: a key created before `lostAt` never works.
 */
export const MemberRightsLoss = defineEntity({
  name: "MemberRightsLoss",
  tableName: "member_rights_losses",
  properties: {
    /** The member (`mem_…`); the primary key makes the check on key creation and verification one lookup. */
    memberId: p.text().primary(),
    /** Only ever moves forward (a repeated or older report changes nothing). */
    lostAt: p.datetime(),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export const entities = [ApiKey, MemberRightsLoss];
