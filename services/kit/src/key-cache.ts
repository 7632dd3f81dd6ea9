import { createHash } from "node:crypto";
import type { Redis } from "ioredis";

/**
 * The verified-key cache in Redis, shared by the keys service (which alone writes it) and the
 * gateway (which reads it on every request, in the same round trip as the rate limit).
 *
 * Entries are keyed by the secret's SHA-256 fingerprint, so Redis never holds a secret. A valid
 * key's entry is written with NX; revoking or disabling a key overwrites its entry with a
 * tombstone. So a verification racing a revocation can never leave a valid entry behind a
 * revoke that has returned: either the tombstone overwrites it, or it finds the tombstone and
 * writes nothing.
 */

/** What the gateway needs to act for a key without asking the keys service. */
export interface CachedKey {
  state: "valid";
  keyId: string;
  projectId: string;
  creatorMemberId: string;
  /** RFC 3339. */
  keyCreatedAt: string;
  /** RFC 3339, or null for a key that never expires. */
  expiresAt: string | null;
}

/** A key that must be refused, and why. */
export interface KeyTombstone {
  state: "revoked" | "creator_lost_rights";
  keyId: string;
}

export type KeyCacheEntry = CachedKey | KeyTombstone;

/** Longest a valid entry lives: bounds how long a key stays cached after its data changed otherwise. */
export const validEntryTtlSeconds = 300;
/** Tombstones outlive any valid entry that could have been written before them. */
export const tombstoneTtlSeconds = 3_600;

export const fingerprintOf = (secret: string): string => createHash("sha256").update(secret).digest("hex");

export const keyCacheKey = (fingerprint: string): string => `testrun:key:${fingerprint}`;

export function parseKeyCacheEntry(raw: string | null): KeyCacheEntry | undefined {
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as KeyCacheEntry;
  } catch {
    return undefined;
  }
}

/** Caches a valid key unless something (a tombstone) is there already. */
export async function cacheValidKey(
  redis: Redis,
  fingerprint: string,
  key: Omit<CachedKey, "state">,
): Promise<void> {
  const untilExpiry = key.expiresAt ? Math.floor((Date.parse(key.expiresAt) - Date.now()) / 1000) : Infinity;
  const ttl = Math.min(validEntryTtlSeconds, untilExpiry);
  if (ttl < 1) return;
  await redis.set(keyCacheKey(fingerprint), JSON.stringify({ state: "valid", ...key }), "EX", ttl, "NX");
}

/** Marks keys as refused at once, whatever the cache held; call before answering a revoke. */
export async function tombstoneKeys(
  redis: Redis,
  keys: { fingerprint: string; tombstone: KeyTombstone }[],
): Promise<void> {
  if (keys.length === 0) return;
  const batch = redis.multi();
  for (const { fingerprint, tombstone } of keys) {
    batch.set(keyCacheKey(fingerprint), JSON.stringify(tombstone), "EX", tombstoneTtlSeconds);
  }
  await batch.exec();
}
