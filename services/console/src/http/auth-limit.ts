import type Koa from "koa";
import { refusals } from "../metrics.js";

/**
 * A token bucket for the anonymous sign-in routes (/auth/link, /auth/link/preview, /auth/oidc/*),
 * each of which reads the database or the catalog before it knows who is asking. It holds
 * `perMinute` tokens and gets them back evenly over a minute; a request past it is 429 with
 * Retry-After. One bucket for the whole replica, not one per client address: the console has no
 * trusted-proxy setting (behind an ingress every request comes from the ingress's address, and
 * X-Forwarded-For is whatever the client wrote), so an address is not known. A flood therefore
 * delays everyone's sign-in on this replica, but never loads the database past the bound, and
 * signed-in work (the /api calls) is not counted (docs/security.md, "Resource limits").
 */
export class AuthAttempts {
  private tokens: number;
  private updatedAt: number;

  constructor(
    readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = perMinute;
    this.updatedAt = now();
  }

  /** Takes one token: 0 when there was one, else the whole seconds until the next comes back. */
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

  /** Koa middleware: the request goes on with a token, or is answered 429 with Retry-After. */
  middleware(): Koa.Middleware {
    return async (ctx, next) => {
      const retryAfter = this.take();
      if (retryAfter === 0) return next();
      refusals.inc({ reason: "rate_limited" });
      ctx.status = 429;
      ctx.set("Retry-After", String(retryAfter));
      ctx.set("Cache-Control", "no-store");
      ctx.body = {
        error: "too_many_requests",
        message: `too many sign-in attempts on this server just now; try again in ${retryAfter} s`,
      };
    };
  }
}
