import { type Client, Code, ConnectError } from "@connectrpc/connect";
import type Router from "@koa/router";
import { type AutomationService, BadgeState } from "@testrun/gen/testrun/automation/v1/automation_pb";
import type { Logger } from "@testrun/kit";
import { makeBadge } from "badge-maker";
import type { AuthAttempts } from "./auth-limit.js";

export interface BadgeDeps {
  automation: Client<typeof AutomationService>;
  /**
   * Anonymous badge requests this replica answers per minute (BADGE_REQUESTS_PER_MINUTE) and one
   * client address gets of them (BADGE_REQUESTS_PER_CLIENT_PER_MINUTE).
   */
  badgeRequests: AuthAttempts;
  logger: Logger;
}

/**
 * An SVG badge is an image, never a page: nothing of it runs or loads anything, not even when it
 * is opened on its own (then a sandboxed, unique origin), and no page may frame it.
 */
export const badgePolicy = "default-src 'none'; frame-ancestors 'none'; sandbox";

/**
 * READMEs embed the badge from other sites (GitHub through its image proxy), which must each time
 * ask again whether the state changed: a cached badge would show an old state.
 */
export const badgeCacheControl = "no-cache, max-age=0";

/** What each state shows: shields.io's colours, the label fixed ("tests"). */
const shown: Record<"passing" | "failing" | "unknown", { message: string; color: string }> = {
  passing: { message: "passing", color: "brightgreen" },
  failing: { message: "failing", color: "red" },
  unknown: { message: "unknown", color: "lightgrey" },
};

/** The badge of a state as SVG: "tests" and passing (green), failing (red) or unknown (grey). */
export function badgeSvg(state: BadgeState): string {
  const look =
    state === BadgeState.PASSING
      ? shown.passing
      : state === BadgeState.FAILING
        ? shown.failing
        : shown.unknown;
  return makeBadge({ label: "tests", ...look, style: "flat" });
}

/** A badge URL's token: letters, digits, `-` and `_`; anything else is no badge, asked of no one. */
const badgeFile = /^([A-Za-z0-9_-]{1,200})\.svg$/;

/** The path as logged: a badge's token is its right to be read, kept out of log lines like keys. */
export const loggedBadgePath = (path: string) => (path.startsWith("/badges/") ? "/badges/[token].svg" : path);

/**
 * GET /badges/{token}.svg: the status badge of one test plan on one environment, for anyone who
 * has its URL (no session, no cookie read). AutomationService.GetBadgeState says passing, failing
 * or unknown; nothing else of the project is shown, or asked for. An unknown or revoked token is
 * 404 with the unknown badge as its body, so a README shows "unknown" rather than a broken image
 * and the answer says nothing of whether the token ever existed; 503 (the unknown badge too) when
 * the automation service cannot answer; 429 past BADGE_REQUESTS_PER_MINUTE, or past
 * BADGE_REQUESTS_PER_CLIENT_PER_MINUTE from one client address (docs/console.md,
 * "Badges").
 */
export function badgeRoutes(router: Router, deps: BadgeDeps): void {
  const { automation, badgeRequests, logger } = deps;
  router.get("/badges/:file", async (ctx) => {
    // Embedded by other sites: the image is readable cross-origin (the app's default is same-origin).
    ctx.set("Cross-Origin-Resource-Policy", "cross-origin");
    ctx.set("Content-Security-Policy", badgePolicy);
    ctx.set("Cache-Control", badgeCacheControl);
    ctx.type = "image/svg+xml; charset=utf-8";
    const answer = (status: number, state: BadgeState) => {
      ctx.status = status;
      ctx.body = badgeSvg(state);
    };
    const { retryAfter } = badgeRequests.take(ctx.ip);
    if (retryAfter > 0) {
      ctx.set("Retry-After", String(retryAfter));
      return answer(429, BadgeState.UNKNOWN);
    }
    const token = badgeFile.exec(ctx.params.file ?? "")?.[1];
    if (!token) return answer(404, BadgeState.UNKNOWN);
    try {
      const { state } = await automation.getBadgeState({ token });
      return answer(200, state);
    } catch (error) {
      const code = ConnectError.from(error).code;
      if (code === Code.NotFound || code === Code.InvalidArgument) return answer(404, BadgeState.UNKNOWN);
      // The error, never the token: it is the badge's right to be read.
      logger.warn({ err: ConnectError.from(error).message }, "reading a badge's state failed");
      ctx.set("Cache-Control", "no-store");
      return answer(503, BadgeState.UNKNOWN);
    }
  });
}
