import { bodyParser } from "@koa/bodyparser";
import type Router from "@koa/router";
import { MemberState } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Logger } from "@testrun/kit";
import { OidcFailure, type OidcSignIn } from "../auth/oidc.js";
import type { SessionStore } from "../auth/sessions.js";
import type { SignInLinks } from "../auth/sign-in-links.js";
import type { Directory } from "../directory.js";
import type { ConsoleCookies } from "./cookies.js";
import { safeReturnPath } from "./returns.js";

export interface AuthDeps {
  sessions: SessionStore;
  links: SignInLinks;
  directory: Directory;
  cookies: ConsoleCookies;
  oidc?: OidcSignIn;
  logger: Logger;
}

/** Where the sign-in page shows why sign-in did not happen (the web app words each). */
const signInPage = (error: "not_a_member" | "oidc_failed" | "link_invalid") => `/sign-in?error=${error}`;

/**
 * Sign-in and sign-out (plain HTTP: they are redirects and cookies, not RPCs):
 * - POST /auth/link {token}: uses a one-time sign-in link; 204 with the session cookie, or 400.
 * - GET /auth/oidc/start?next=/path: off to the identity provider.
 * - GET /auth/oidc/callback: back from it; signed in and sent to `next`, or to the sign-in page.
 * - POST /auth/sign-out: ends the session (its row is deleted) and clears the cookie; 204.
 */
export function authRoutes(router: Router, deps: AuthDeps): void {
  const { sessions, links, directory, cookies, logger } = deps;

  const signIn = async (email: string, method: "link" | "oidc") => {
    const session = await sessions.start(email, method);
    const maxAge = Math.floor((session.expiresAt.getTime() - Date.now()) / 1000);
    return cookies.set(cookies.sessionName, session.id, maxAge);
  };

  router.post("/auth/link", bodyParser({ enableTypes: ["json"], jsonLimit: "2kb" }), async (ctx) => {
    const token = (ctx.request.body as { token?: unknown } | undefined)?.token;
    const memberId =
      typeof token === "string" && ctx.is("application/json") ? await links.redeem(token) : undefined;
    const member = memberId ? await directory.member(memberId) : undefined;
    if (!member || member.state !== MemberState.ACTIVE) {
      logger.info({ outcome: "link_invalid" }, "sign-in refused");
      ctx.status = 400;
      ctx.body = {
        error: "link_invalid",
        message: "this sign-in link was already used, expired, or is not valid",
      };
      return;
    }
    ctx.append("Set-Cookie", await signIn(member.email, "link"));
    logger.info({ method: "link", memberId: member.id }, "signed in");
    ctx.status = 204;
  });

  router.post("/auth/sign-out", async (ctx) => {
    const id = cookies.read(ctx.get("Cookie"), cookies.sessionName);
    if (id) await sessions.end(id);
    ctx.append("Set-Cookie", cookies.clear(cookies.sessionName));
    ctx.status = 204;
  });

  const oidc = deps.oidc;
  if (!oidc) return;
  router.get("/auth/oidc/start", async (ctx) => {
    try {
      const { url, state } = await oidc.start(safeReturnPath(ctx.query.next as string | undefined));
      ctx.append("Set-Cookie", cookies.set(cookies.oidcStateName, state, 600));
      ctx.redirect(url.href);
    } catch (error) {
      logger.error({ err: error }, "oidc sign-in could not start (provider unreachable?)");
      ctx.redirect(signInPage("oidc_failed"));
    }
  });

  router.get("/auth/oidc/callback", async (ctx) => {
    ctx.append("Set-Cookie", cookies.clear(cookies.oidcStateName));
    let outcome: { email: string; returnTo: string };
    try {
      outcome = await oidc.finish(ctx.querystring, cookies.read(ctx.get("Cookie"), cookies.oidcStateName));
    } catch (error) {
      if (!(error instanceof OidcFailure)) throw error;
      logger.info({ reason: error.message }, "oidc sign-in failed");
      ctx.redirect(signInPage("oidc_failed"));
      return;
    }
    // Matched by email, never created: a person nobody added is told so.
    if ((await directory.membershipsOf(outcome.email)).length === 0) {
      logger.info({ outcome: "not_a_member" }, "sign-in refused");
      ctx.redirect(signInPage("not_a_member"));
      return;
    }
    ctx.append("Set-Cookie", await signIn(outcome.email, "oidc"));
    logger.info({ method: "oidc" }, "signed in");
    ctx.redirect(outcome.returnTo);
  });
}
