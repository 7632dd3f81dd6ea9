import { isIPv4, isIPv6 } from "node:net";
import { type KeyCacheEntry, keyCacheKey, openKeyCacheEntry } from "@testrun/kit";
import type { Redis } from "ioredis";

/**
 * The counters behind the per-key rate limit and the per-address limit on failed
 * authentications, kept in Redis so that every gateway replica shares them.
 *
 * Both are fixed windows of one minute that start at the first counted event: the window's key
 * expires 60 s after it was created. "61 requests within a minute of the first" is refused
 * deterministically, without the edge effects of windows aligned to the clock.
 *
 * The failed-authentication limit bounds how fast an address can have secrets verified by the keys
 * service (guessing), without ever standing in the way of a key known to be real:
 * - a key the verified-key cache holds (written by the keys service, see @testrun/kit
 *   key-cache.ts), or one the gateway has seen verified in the last `knownKeyTtlSeconds` (its
 *   cache entry lives only minutes), is never refused for its address's failures: it cannot be a
 *   guess, since only the secret's holder can present its fingerprint;
 * - any other secret is counted as a failure of its address before it is verified, in the same
 *   atomic step that checks the limit, so a parallel burst cannot send more than the limit to the
 *   keys service; the count is taken back when the key turns out to exist. Requests bearing the
 *   same secret from the same address while it is being verified share that one count (a pipeline
 *   firing 30 parallel requests with a key it has just created is one secret, not 30 guesses).
 *
 * The hot path costs one Redis round trip: one script reads the cache entry and the known-key
 * mark, counts the request against the key's limit and, for a secret neither knows, counts the
 * failure in advance. The entry is trusted only once it opens under KEY_CACHE_SECRET (sealed by
 * the keys service, for this fingerprint, not past its end: @testrun/kit key-cache.ts); one that
 * does not is no entry, and its secret is verified with the keys service. (The script cannot check
 * the seal, so such an entry spares its secret the failure counted in advance; a refusal is then
 * counted after the keys service's answer instead. Only the keys service and the gateway may
 * write the cache: docs/deploy.md, "Redis users".) Redis runs a script atomically, so replicas never lose counts. (The keys
 * are not in one hash slot: a Redis Cluster would need hash tags. One Redis server, or a primary
 * with replicas, is what the system runs on.)
 */

const windowMs = 60_000;
/** How long a key verified valid stays known (refreshed on every verification, so at least every few minutes while in use). */
export const knownKeyTtlSeconds = 30 * 24 * 3600;

// KEYS: failed-auth counter of the address, key-cache entry, rate counter of the key, known-key
// mark, the mark of this secret's verification pending for this address.
// ARGV: failed-auth limit, window in ms.
// Returns {0, ttl} when the address is blocked for this secret (nothing counted), else
// {1, entry|false, count, ttl, advance}: advance is 1 when a failure was counted in advance by
// this request, 2 when a request with the same secret from the same address counted it and its
// verification is pending, 0 when nothing was counted (the cache or the known mark knows it).
const checkKeyScript = `
local entry = redis.call('GET', KEYS[2])
local advance = 0
if not entry and redis.call('EXISTS', KEYS[4]) == 0 then
  if redis.call('EXISTS', KEYS[5]) == 1 then
    advance = 2
  else
    local failures = redis.call('INCR', KEYS[1])
    local fttl = redis.call('PTTL', KEYS[1])
    if failures == 1 or fttl < 0 then
      redis.call('PEXPIRE', KEYS[1], ARGV[2])
      fttl = tonumber(ARGV[2])
    end
    if failures > tonumber(ARGV[1]) then
      redis.call('DECR', KEYS[1])
      return {0, fttl}
    end
    redis.call('SET', KEYS[5], '1', 'PX', ARGV[2])
    advance = 1
  end
end
local count = redis.call('INCR', KEYS[3])
local ttl = redis.call('PTTL', KEYS[3])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {1, entry, count, ttl, advance}
`;

// KEYS: failed-auth counter of the address, known-key mark, pending-verification mark. ARGV: 1 to
// take back a failure counted in advance, the known mark's TTL in seconds (0: leave the mark
// alone), 1 to end the pending verification (later requests with the secret count again).
// (Should the window have ended in between, this takes one failure off the next window: at most
// one per verification, which no guess gets back.)
const settleScript = `
if ARGV[1] == '1' and tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then
  redis.call('DECR', KEYS[1])
end
if tonumber(ARGV[2]) > 0 then
  redis.call('SET', KEYS[2], '1', 'EX', ARGV[2])
end
if ARGV[3] == '1' then
  redis.call('DEL', KEYS[3])
end
return 1
`;

// KEYS: failed-auth counter of the address. ARGV: window in ms. Returns {count, ttl}.
const authFailedScript = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;

/** Where a key stands against its limit after this request was counted. */
export interface RateState {
  limit: number;
  /** Requests counted in the current window, this one included (may exceed the limit). */
  count: number;
  /** Whole seconds until the window ends (at least 1). */
  resetSeconds: number;
}

export type KeyCheck =
  | { blocked: true; retryAfterSeconds: number }
  | {
      blocked: false;
      entry: KeyCacheEntry | undefined;
      rate: RateState;
      /**
       * Whether a failure of the address was counted before verifying (neither the cache nor the
       * known marks know the secret): "counted" by this request, whose verification's outcome
       * settles it (keyExists, notVerified or refusedCounted); "shared" with a request bearing the
       * same secret whose verification is pending; "none".
       */
      advance: "none" | "counted" | "shared";
    };

export interface FailureCount {
  /** Whether this failure took the address over its limit. */
  blocked: boolean;
  retryAfterSeconds: number;
}

export interface LimitOptions {
  requestsPerMinute: number;
  authFailuresPerMinute: number;
  /** KEY_CACHE_SECRET: opens the cache entries the keys service sealed. */
  keyCacheSecret: string;
}

type ScriptCommand = (...args: (string | number)[]) => Promise<unknown[]>;

const wholeSeconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));
const advances = ["none", "counted", "shared"] as const;

export class RequestLimits {
  private readonly checkKeyCommand: ScriptCommand;
  private readonly authFailedCommand: ScriptCommand;
  private readonly settleCommand: ScriptCommand;

  constructor(
    private readonly redis: Redis,
    private readonly options: LimitOptions,
  ) {
    // defineCommand sends EVALSHA and falls back to EVAL once when Redis lost the script.
    redis.defineCommand("gatewayCheckKey", { numberOfKeys: 5, lua: checkKeyScript });
    redis.defineCommand("gatewayAuthFailed", { numberOfKeys: 1, lua: authFailedScript });
    redis.defineCommand("gatewayAuthSettle", { numberOfKeys: 3, lua: settleScript });
    const commands = redis as unknown as Record<string, ScriptCommand>;
    this.checkKeyCommand = (...args) => (commands.gatewayCheckKey as ScriptCommand).apply(redis, args);
    this.authFailedCommand = (...args) => (commands.gatewayAuthFailed as ScriptCommand).apply(redis, args);
    this.settleCommand = (...args) => (commands.gatewayAuthSettle as ScriptCommand).apply(redis, args);
  }

  /**
   * One round trip: what the cache says about the key, and the request counted against the key's
   * limit; for a secret neither the cache nor the known marks know, a failure of the address
   * counted in advance (blocked, and nothing counted, when that would take it over its limit).
   */
  async checkKey(fingerprint: string, address: string): Promise<KeyCheck> {
    const reply = await this.checkKeyCommand(
      failureCounterKey(address),
      keyCacheKey(fingerprint),
      rateCounterKey(fingerprint),
      knownKeyMark(fingerprint),
      pendingMark(address, fingerprint),
      this.options.authFailuresPerMinute,
      windowMs,
    );
    if (reply[0] === 0) return { blocked: true, retryAfterSeconds: wholeSeconds(Number(reply[1])) };
    const raw = reply[1];
    return {
      blocked: false,
      entry: openKeyCacheEntry(
        this.options.keyCacheSecret,
        fingerprint,
        typeof raw === "string" ? raw : null,
      ),
      rate: {
        limit: this.options.requestsPerMinute,
        count: Number(reply[2]),
        resetSeconds: wholeSeconds(Number(reply[3])),
      },
      advance: advances[Number(reply[4])] ?? "none",
    };
  }

  /**
   * The keys service knows this secret (valid, or its creator lost rights): takes back the failure
   * counted in advance, if one was, and marks the key known, so that its address's failures never
   * hold it up.
   */
  async keyExists(address: string, fingerprint: string, counted: boolean): Promise<void> {
    await this.settleCommand(
      failureCounterKey(address),
      knownKeyMark(fingerprint),
      pendingMark(address, fingerprint),
      counted ? 1 : 0,
      knownKeyTtlSeconds,
      counted ? 1 : 0,
    );
  }

  /** The secret could not be verified (the keys service failed us): the failure counted in advance was none. */
  async notVerified(address: string, fingerprint: string): Promise<void> {
    await this.settleCommand(
      failureCounterKey(address),
      knownKeyMark(fingerprint),
      pendingMark(address, fingerprint),
      1,
      0,
      1,
    );
  }

  /**
   * The keys service refused a secret counted in advance: the failure stays counted, and the
   * verification is no longer pending, so the next requests with that secret count again.
   */
  async refusedCounted(address: string, fingerprint: string): Promise<void> {
    await this.settleCommand(
      failureCounterKey(address),
      knownKeyMark(fingerprint),
      pendingMark(address, fingerprint),
      0,
      0,
      1,
    );
  }

  /** The keys service refused a secret that was marked known (revoked, expired, gone): forget it. */
  async forgetKey(fingerprint: string): Promise<void> {
    await this.redis.del(knownKeyMark(fingerprint));
  }

  /** Counts a failed authentication of an address; says whether it is now over its limit. */
  async recordAuthFailure(address: string): Promise<FailureCount> {
    const [count, ttl] = await this.authFailedCommand(failureCounterKey(address), windowMs);
    return {
      blocked: Number(count) > this.options.authFailuresPerMinute,
      retryAfterSeconds: wholeSeconds(Number(ttl)),
    };
  }
}

// A secret's fingerprint names exactly one key, so counting by fingerprint is counting by key,
// and it can be done before the key's id is known (on a cache miss).
const rateCounterKey = (fingerprint: string) => `testrun:gateway:rate:${fingerprint}`;
const failureCounterKey = (address: string) => `testrun:gateway:authfail:${address}`;
/** Set when the keys service has said the secret exists; never set for a guess. */
const knownKeyMark = (fingerprint: string) => `testrun:gateway:known:${fingerprint}`;
/** Set while a secret presented from an address, counted in advance, is being verified. */
const pendingMark = (address: string, fingerprint: string) =>
  `testrun:gateway:pending:${address}:${fingerprint}`;

/**
 * The unit failed authentications are counted by: an IPv4 address, or the /64 network of an IPv6
 * address (one subscriber usually holds a whole /64, so counting single v6 addresses would let a
 * client rotate through billions of them).
 */
export function clientAddressKey(ip: string): string {
  const address = ip.replace(/%.*$/, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return mapped[1];
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return address || "unknown";
  return `${expandIPv6(address).slice(0, 4).join(":")}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, in lower case without leading zeros. */
function expandIPv6(address: string): string[] {
  const [head = "", tail] = address.toLowerCase().split("::");
  const groups = (part: string) => (part ? part.split(":") : []);
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  // An embedded IPv4 tail (::1.2.3.4) stands for two groups.
  const last = right.at(-1) ?? left.at(-1);
  const v4Groups = last?.includes(".") ? 1 : 0;
  const missing = 8 - left.length - right.length - v4Groups;
  return [...left, ...Array<string>(tail === undefined ? 0 : missing).fill("0"), ...right].map((group) =>
    group.includes(".") ? group : group.replace(/^0+(?=.)/, ""),
  );
}
