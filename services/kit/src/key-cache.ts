import { createHash, createHmac, timingSafeEqual } from "node:crypto";
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
 *
 * Every entry is sealed with an HMAC under KEY_CACHE_SECRET, which only the keys service and the
 * gateway hold: whoever else can write to Redis (an executor, say, which parses responses of
 * servers anyone can run) cannot make an entry the gateway trusts. The MAC covers the whole entry
 * as stored (its state, key id, project, creator, creation time and expiry), the fingerprint it
 * is filed under (so a genuine entry copied to another fingerprint is refused) and the time the
 * entry ends (so an old entry put back after a revocation is refused once its time is over). An
 * entry that is not sealed, sealed under another secret, filed under another fingerprint or past
 * its end reads as no entry at all: the gateway then asks the keys service, never trusts it.
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

/** What is signed: the entry, the fingerprint it is filed under, and when it ends (ms since the epoch). */
interface SealedPayload {
  fingerprint: string;
  until: number;
  entry: KeyCacheEntry;
}

/** Keeps a MAC of this cache from ever being valid for anything else signed with the same secret. */
const macContext = "testrun key cache v1\n";
const macLength = 32;

const macOf = (secret: string, payload: string): Buffer =>
  createHmac("sha256", secret).update(macContext).update(payload).digest();

/** A stored entry: `<base64url HMAC-SHA256>.<JSON payload>`, the MAC over the payload's exact bytes. */
export function sealKeyCacheEntry(
  secret: string,
  fingerprint: string,
  entry: KeyCacheEntry,
  until: number,
): string {
  const payload = JSON.stringify({ fingerprint, until, entry } satisfies SealedPayload);
  return `${macOf(secret, payload).toString("base64url")}.${payload}`;
}

/**
 * The entry a stored value holds, when it is sealed under `secret` for this fingerprint and not
 * past its end; undefined for anything else (missing, malformed, forged, copied, stale). The MAC
 * is compared in constant time before the payload is even parsed.
 */
export function openKeyCacheEntry(
  secret: string,
  fingerprint: string,
  raw: string | null | undefined,
  now: number = Date.now(),
): KeyCacheEntry | undefined {
  if (!raw) return undefined;
  const dot = raw.indexOf(".");
  if (dot < 0) return undefined;
  const presented = Buffer.from(raw.slice(0, dot), "base64url");
  const payload = raw.slice(dot + 1);
  if (presented.length !== macLength || !timingSafeEqual(presented, macOf(secret, payload))) return undefined;
  let sealed: SealedPayload;
  try {
    sealed = JSON.parse(payload) as SealedPayload;
  } catch {
    return undefined;
  }
  if (sealed?.fingerprint !== fingerprint || typeof sealed.until !== "number" || sealed.until <= now)
    return undefined;
  return wellFormed(sealed.entry) ? sealed.entry : undefined;
}

/** Only what this version writes: a signed entry of another shape (a newer writer) is not guessed at. */
function wellFormed(entry: unknown): entry is KeyCacheEntry {
  if (typeof entry !== "object" || entry === null) return false;
  const e = entry as Record<string, unknown>;
  const isString = (value: unknown) => typeof value === "string" && value !== "";
  if (!isString(e.keyId)) return false;
  if (e.state === "revoked" || e.state === "creator_lost_rights") return true;
  return (
    e.state === "valid" &&
    isString(e.projectId) &&
    isString(e.creatorMemberId) &&
    isString(e.keyCreatedAt) &&
    (e.expiresAt === null || isString(e.expiresAt))
  );
}

// KEYS: the entry. ARGV: the value found, the new value, its TTL in seconds.
// Replaces the entry only if it still is what was found: a tombstone written meanwhile stays.
const replaceIfUnchangedScript = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
end
return false
`;

/**
 * Caches a valid key unless something (a tombstone) is there already. What is there but does not
 * open under `secret` (sealed before the secret changed, or written by someone without it) is
 * replaced, but only if it is still the same value: a tombstone written in between is kept.
 */
export async function cacheValidKey(
  redis: Redis,
  secret: string,
  fingerprint: string,
  key: Omit<CachedKey, "state">,
): Promise<void> {
  const now = Date.now();
  const untilExpiry = key.expiresAt ? Math.floor((Date.parse(key.expiresAt) - now) / 1000) : Infinity;
  const ttl = Math.min(validEntryTtlSeconds, untilExpiry);
  if (ttl < 1) return;
  const cacheKey = keyCacheKey(fingerprint);
  const value = sealKeyCacheEntry(secret, fingerprint, { state: "valid", ...key }, now + ttl * 1000);
  if (await redis.set(cacheKey, value, "EX", ttl, "NX")) return;
  const found = await redis.get(cacheKey);
  if (found === null || openKeyCacheEntry(secret, fingerprint, found, now)) return;
  await redis.eval(replaceIfUnchangedScript, 1, cacheKey, found, value, ttl);
}

/** Marks keys as refused at once, whatever the cache held; call before answering a revoke. */
export async function tombstoneKeys(
  redis: Redis,
  secret: string,
  keys: { fingerprint: string; tombstone: KeyTombstone }[],
): Promise<void> {
  if (keys.length === 0) return;
  const until = Date.now() + tombstoneTtlSeconds * 1000;
  const batch = redis.multi();
  for (const { fingerprint, tombstone } of keys) {
    const value = sealKeyCacheEntry(secret, fingerprint, tombstone, until);
    batch.set(keyCacheKey(fingerprint), value, "EX", tombstoneTtlSeconds);
  }
  await batch.exec();
}
