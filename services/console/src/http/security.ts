import type { Middleware } from "koa";

/**
 * Only this origin's own files: no inline script or style, no third-party anything, never framed.
 * The web app is built so that it needs nothing more (services/console/web).
 */
export const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** Headers every console response carries. */
export function securityHeaders(appUrl: string): Middleware {
  const https = appUrl.startsWith("https://");
  return async (ctx, next) => {
    ctx.set("Content-Security-Policy", contentSecurityPolicy);
    ctx.set("X-Content-Type-Options", "nosniff");
    ctx.set("X-Frame-Options", "DENY");
    ctx.set("Referrer-Policy", "no-referrer");
    ctx.set("Cross-Origin-Opener-Policy", "same-origin");
    ctx.set("Cross-Origin-Resource-Policy", "same-origin");
    if (https) ctx.set("Strict-Transport-Security", "max-age=31536000");
    await next();
  };
}

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * CSRF: a state-changing request must come from the console's own pages. Browsers say where a
 * request comes from in Sec-Fetch-Site (or at least Origin); a request from another site is
 * refused before it reaches a handler. Requests carrying neither header are not from a browser
 * (which would not attach the cookie on its own) and pass. On top of this, the Connect API only
 * accepts its own content types, which a cross-site form cannot send.
 */
export function sameOriginWrites(appUrl: string): Middleware {
  const origin = new URL(appUrl).origin;
  return async (ctx, next) => {
    if (!safeMethods.has(ctx.method)) {
      const site = ctx.get("Sec-Fetch-Site");
      const from = ctx.get("Origin");
      const allowed = site ? site === "same-origin" || site === "none" : !from || from === origin;
      if (!allowed) {
        ctx.status = 403;
        // Shaped as a Connect error, so the web app shows it like any refusal.
        ctx.body = {
          code: "permission_denied",
          message: "requests that change something must come from the console itself",
        };
        return;
      }
    }
    await next();
  };
}
