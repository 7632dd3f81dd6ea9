import ipaddr from "ipaddr.js";

/**
 * A token bucket: `perMinute` tokens, given back evenly over a minute. `take` answers 0 when a
 * token was there (and takes it), else the whole seconds until the next one comes back.
 */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  constructor(
    readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = perMinute;
    this.updatedAt = now();
  }

  take(): number {
    const now = this.now();
    const perMs = this.perMinute / 60_000;
    this.tokens = Math.min(this.perMinute, this.tokens + (now - this.updatedAt) * perMs);
    this.updatedAt = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - this.tokens) / perMs / 1000));
  }
}

/**
 * One token bucket per key (a client address, a member, a webhook), at most `maxKeys` of them:
 * past that the least recently used is forgotten, so no number of distinct keys grows memory
 * beyond the bound (a bucket and its key are a few hundred bytes). Forgetting loses nothing while
 * fewer than `maxKeys` keys were used within a minute: a bucket untouched for a minute is full
 * again, the same as no bucket. Only more distinct keys than that within one minute give an
 * evicted key a full bucket back early, which is why every keyed limit has a bound for all keys
 * together beside it.
 */
export class KeyedBuckets {
  /** Insertion order is use order: a bucket taken from is moved to the end. */
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    readonly perMinute: number,
    readonly maxKeys: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Buckets held now (at most maxKeys). */
  get size(): number {
    return this.buckets.size;
  }

  /** Takes one token of `key`'s bucket: 0 when there was one, else the seconds until one is back. */
  take(key: string): number {
    let bucket = this.buckets.get(key);
    if (bucket) this.buckets.delete(key);
    else {
      bucket = new TokenBucket(this.perMinute, this.now);
      if (this.buckets.size >= this.maxKeys) {
        const oldest = this.buckets.keys().next().value;
        if (oldest !== undefined) this.buckets.delete(oldest);
      }
    }
    this.buckets.set(key, bucket);
    return bucket.take();
  }
}

/**
 * The key a client address is limited by: an IPv4 address as it is (an IPv4-mapped IPv6 address,
 * `::ffff:192.0.2.1`, as its IPv4 address), an IPv6 address by its /64. One host commonly holds a
 * whole /64 (SLAAC, privacy addresses) and can pick a new address in it for every request, so
 * counting IPv6 by address would let one client through a per-address limit at will; its
 * written forms (zeros compressed or not, upper or lower case, a zone) are one key too. Anything
 * that is no address (a proxy's odd header) is limited by its text, at most 100 characters of it.
 */
export function clientAddressKey(address: string | undefined): string {
  const text = (address ?? "").trim();
  const zoneless = text.replace(/%.*$/, "");
  if (!ipaddr.isValid(zoneless)) return text.slice(0, 100) || "unknown";
  const parsed = ipaddr.process(zoneless);
  if (parsed.kind() === "ipv4") return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((p) => p.toString(16)).join(":")}::/64`;
}
