import type { KeyExpiryChoice, KeyKindName } from "./db/entities.js";

/** A key as stored, with the latest time its creator lost rights (null: never, as far as we know). */
export interface StoredKey {
  id: string;
  projectId: string;
  organizationId: string;
  name: string;
  displayPrefix: string;
  fingerprint: string;
  creatorMemberId: string;
  createdAt: Date;
  expiry: KeyExpiryChoice;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  disabledAt: Date | null;
  /** member_rights_losses.lost_at of the creator. */
  creatorLostAt: Date | null;
  /** An API key or a content token. */
  kind: KeyKindName;
}

export type KeyStateName = "active" | "expired" | "revoked" | "creator_lost_rights";

/** How long each expiry choice lives (keys.proto, KeyExpiry); `never` has no end. */
export const expiryDurationMs: Record<KeyExpiryChoice, number | null> = {
  "30d": 30 * 86_400_000,
  "90d": 90 * 86_400_000,
  "1y": 365 * 86_400_000,
  never: null,
};

/**
 * Whether a key's creator lost Editor-or-above rights at or after the key was created. The catalog
 * refuses an API key whose creator's rights_lost_at is at or after its creation time (roles.ts,
 * keyStillValid), so the tie goes to "dead" here too. A key stored after DisableKeysOfMember ran
 * has no disabled_at, and is caught by the remembered lost_at.
 */
export const creatorLostRights = (key: StoredKey): boolean =>
  key.disabledAt !== null || (key.creatorLostAt !== null && key.createdAt <= key.creatorLostAt);

/** Whether the key works at `now`, and if not why; when several reasons hold, the first of revoked, expired, creator lost rights wins. */
export function keyState(key: StoredKey, now: Date): KeyStateName {
  if (key.revokedAt) return "revoked";
  if (key.expiresAt && key.expiresAt <= now) return "expired";
  if (creatorLostRights(key)) return "creator_lost_rights";
  return "active";
}

/** When the key stopped working because its creator lost rights, for a key in that state. */
export const disabledAtOf = (key: StoredKey): Date | null =>
  key.disabledAt ?? (creatorLostRights(key) ? key.creatorLostAt : null);
