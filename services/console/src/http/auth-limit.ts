import { clientAddressKey, KeyedBuckets, TokenBucket } from "@testrun/kit";
import type Koa from "koa";
import { refusals } from "../metrics.js";

/** Client addresses whose buckets one limit remembers at once (kit rate-buckets.ts, KeyedBuckets). */
export const maxClientBuckets = 10_000;

/**
 * A token bucket for anonymous requests (the sign-in routes /auth/link, /auth/link/preview,
 * /auth/oidc/*, each of which reads the database or the catalog before it knows who is asking;
 * the public badges), twice over: one for each client address, `perClientPerMinute`, and one for
 * the whole replica, `perMinute`. A request past either is 429 with Retry-After. The per-client
 * bucket comes first and a refused request takes nothing from the replica's, so one client (one
 * IPv4 address, one IPv6 /64) uses at most its own share and cannot make everyone else wait; the
 * replica's bound still holds the database's load when many clients come at once.
 *
 * The client's address is the connection's, or behind proxies the one TRUST_PROXY_HOPS says to
 * believe in X-Forwarded-For (Koa's ctx.ip with app.proxy and maxIpsCount: http/app.ts). At most
 * maxClientBuckets addresses are remembered, the least recently used forgotten first, so many
 * addresses cannot exhaust memory (docs/security.md, "Resource limits").
 */
export class AuthAttempts {
  private readonly replica: TokenBucket;
  private readonly clients: KeyedBuckets;

  constructor(
    readonly perMinute: number,
    readonly perClientPerMinute: number = perMinute,
    now: () => number = Date.now,
  ) {
    this.replica = new TokenBucket(perMinute, now);
    this.clients = new KeyedBuckets(perClientPerMinute, maxClientBuckets, now);
  }

  /** Client addresses remembered now (at most maxClientBuckets). */
  get clientsRemembered(): number {
    return this.clients.size;
  }

  /**
   * Takes one token for the client at `address`: 0 when it had one and so had the replica, else
   * the whole seconds until the next comes back, and who ran out (the message says which).
   */
  take(address: string | undefined): { retryAfter: number; client: boolean } {
    const ofClient = this.clients.take(clientAddressKey(address));
    if (ofClient > 0) return { retryAfter: ofClient, client: true };
    return { retryAfter: this.replica.take(), client: false };
  }

  /** Koa middleware: the request goes on with a token, or is answered 429 with Retry-After. */
  middleware(): Koa.Middleware {
    return async (ctx, next) => {
      const { retryAfter, client } = this.take(ctx.ip);
      if (retryAfter === 0) return next();
      refusals.inc({ reason: "rate_limited" });
      ctx.status = 429;
      ctx.set("Retry-After", String(retryAfter));
      ctx.set("Cache-Control", "no-store");
      ctx.body = {
        error: "too_many_requests",
        message: client
          ? `too many sign-in attempts from your address just now; try again in ${retryAfter} s`
          : `too many sign-in attempts on this server just now; try again in ${retryAfter} s`,
      };
    };
  }
}
