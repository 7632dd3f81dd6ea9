import { bodyParser } from "@koa/bodyparser";
import type Router from "@koa/router";
import { MemberState } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Logger } from "@testrun/kit";
import { attemptLifetimeMs, OidcFailure, type OidcSignIn } from "../auth/oidc.js";
import { asciiLowerCase, type OidcBindings } from "../auth/oidc-bindings.js";
import type { CoveredMember, SessionStore } from "../auth/sessions.js";
import type { SignInLinks } from "../auth/sign-in-links.js";
import type { Directory } from "../directory.js";
import type { AuthAttempts } from "./auth-limit.js";
import type { ConsoleCookies } from "./cookies.js";
import { safeReturnPath } from "./returns.js";

export interface AuthDeps {
  sessions: SessionStore;
  links: SignInLinks;
  directory: Directory;
  cookies: ConsoleCookies;
  oidc?: OidcSignIn;
  bindings?: OidcBindings;
  /** The bound on anonymous sign-in requests (sign-out is not counted). */
  authAttempts: AuthAttempts;
  logger: Logger;
}

/** Where the sign-in page shows why sign-in did not happen (the web app words each). */
const signInPage = (error: "not_a_member" | "oidc_failed" | "link_invalid") => `/sign-in?error=${error}`;

/**
 * Sign-in and sign-out (plain HTTP: they are redirects and cookies, not RPCs):
 * - POST /auth/link/preview {token}: who a sign-in link is for (the page asks "Sign in as X?"),
 *   without using it; 200 {memberId, email, displayName, organizationId, organizationName}, or 400.
 * - POST /auth/link {token}: uses a one-time sign-in link; 204 with the session cookie, or 400.
 * - GET /auth/oidc/start?next=/path: off to the identity provider.
 * - GET /auth/oidc/callback: back from it; signed in and sent to `next`, or to the sign-in page.
 * - POST /auth/sign-out: ends the session (its row is deleted) and clears the cookie; 204.
 * All but sign-out share one bound (auth-limit.ts): past it, 429 with Retry-After.
 */
export function authRoutes(router: Router, deps: AuthDeps): void {
  const { sessions, links, directory, cookies, logger } = deps;
  const limited = deps.authAttempts.middleware();

  /** Starts a session; the browser's previous session (if any) ends, so one browser holds one. */
  const signIn = async (
    cookieHeader: string | undefined,
    email: string,
    method: "link" | "oidc",
    members: CoveredMember[],
  ) => {
    const previous = cookies.read(cookieHeader, cookies.sessionName);
    if (previous) await sessions.end(previous);
    const session = await sessions.start(email, method, members);
    const maxAge = Math.floor((session.expiresAt.getTime() - Date.now()) / 1000);
    return cookies.set(cookies.sessionName, session.id, maxAge);
  };

  const linkInvalid = {
    error: "link_invalid",
    message: "this sign-in link was already used, expired, or is not valid",
  };
  const tokenOf = (ctx: { request: { body?: unknown }; is(type: string): string | false | null }) => {
    const token = (ctx.request.body as { token?: unknown } | undefined)?.token;
    return typeof token === "string" && ctx.is("application/json") ? token : undefined;
  };
  const linkBody = bodyParser({ enableTypes: ["json"], jsonLimit: "2kb" });

  router.post("/auth/link/preview", limited, linkBody, async (ctx) => {
    const token = tokenOf(ctx);
    const memberId = token ? await links.peek(token) : undefined;
    const member = memberId ? await directory.member(memberId) : undefined;
    const [membership] =
      member?.state === MemberState.ACTIVE
        ? await directory.activeMemberships([{ id: member.id, email: member.email }])
        : [];
    if (!membership) {
      ctx.status = 400;
      ctx.body = linkInvalid;
      return;
    }
    ctx.set("Cache-Control", "no-store");
    // The ids let the page tell whether the browser's session is this member or someone else.
    ctx.body = {
      memberId: membership.member.id,
      email: membership.member.email,
      displayName: membership.member.displayName,
      organizationId: membership.organization.id,
      organizationName: membership.organization.name,
    };
  });

  router.post("/auth/link", limited, linkBody, async (ctx) => {
    const token = tokenOf(ctx);
    const memberId = token ? await links.redeem(token) : undefined;
    const member = memberId ? await directory.member(memberId) : undefined;
    if (!member || member.state !== MemberState.ACTIVE) {
      logger.info({ outcome: "link_invalid" }, "sign-in refused");
      ctx.status = 400;
      ctx.body = linkInvalid;
      return;
    }
    // The link's member only: not every organization where the same email is a member.
    const covered = [{ id: member.id, email: member.email }];
    ctx.append("Set-Cookie", await signIn(ctx.get("Cookie"), member.email, "link", covered));
    logger.info({ method: "link", memberId: member.id }, "signed in");
    ctx.status = 204;
  });

  router.post("/auth/sign-out", async (ctx) => {
    const id = cookies.read(ctx.get("Cookie"), cookies.sessionName);
    if (id) await sessions.end(id);
    ctx.append("Set-Cookie", cookies.clear(cookies.sessionName));
    ctx.status = 204;
  });

  const { oidc, bindings } = deps;
  if (!oidc || !bindings) return;
  router.get("/auth/oidc/start", limited, async (ctx) => {
    try {
      // A repeated ?next= (an array) is no return path.
      const next = ctx.query.next;
      const { url, cookie } = await oidc.start(safeReturnPath(typeof next === "string" ? next : undefined));
      ctx.append("Set-Cookie", cookies.set(cookies.oidcStateName, cookie, attemptLifetimeMs / 1000));
      ctx.redirect(url.href);
    } catch (error) {
      logger.error({ err: error }, "oidc sign-in could not start (provider unreachable?)");
      ctx.redirect(signInPage("oidc_failed"));
    }
  });

  router.get("/auth/oidc/callback", limited, async (ctx) => {
    ctx.append("Set-Cookie", cookies.clear(cookies.oidcStateName));
    let outcome: Awaited<ReturnType<OidcSignIn["finish"]>>;
    try {
      outcome = await oidc.finish(ctx.querystring, cookies.read(ctx.get("Cookie"), cookies.oidcStateName));
    } catch (error) {
      if (!(error instanceof OidcFailure)) throw error;
      logger.info({ reason: error.message }, "oidc sign-in failed");
      ctx.redirect(signInPage("oidc_failed"));
      return;
    }
    // Members bound to this subject (bound at its first sign-in by email), never created: a person
    // nobody added is told so.
    const memberships = await bindings.membershipsOf(outcome.identity);
    if (memberships.length === 0) {
      logger.info({ outcome: "not_a_member" }, "sign-in refused");
      ctx.redirect(signInPage("not_a_member"));
      return;
    }
    const covered = memberships.map(({ member }) => ({ id: member.id, email: member.email }));
    // The session shows a stored email (the one the provider gave, when a member has it), never
    // the provider's spelling.
    const providerEmail = asciiLowerCase(outcome.identity.email);
    const email = (covered.find((m) => m.email === providerEmail) ?? covered[0])?.email ?? providerEmail;
    ctx.append("Set-Cookie", await signIn(ctx.get("Cookie"), email, "oidc", covered));
    logger.info({ method: "oidc" }, "signed in");
    ctx.redirect(outcome.returnTo);
  });
}
