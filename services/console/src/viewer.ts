import { Code, ConnectError, createContextKey, type HandlerContext } from "@connectrpc/connect";
import type { SessionStore } from "./auth/sessions.js";
import type { Directory, Membership } from "./directory.js";

/** The session cookie's value of the request being handled (set by the HTTP layer). */
export const sessionCookieKey = createContextKey<string | undefined>(undefined, {
  description: "the console session id from the cookie",
});

/**
 * The viewer the API's request gate resolved for this call from its session cookie, before the body
 * was read (rpc/session-gate.ts): the handler's `Viewers.of` takes it rather than read the session
 * again.
 */
export const resolvedViewerKey = createContextKey<Viewer | undefined>(undefined, {
  description: "the viewer the request gate resolved",
});

/** The person a console call acts for: their live session and current memberships. */
export interface Viewer {
  email: string;
  expiresAt: Date;
  memberships: Membership[];
}

/**
 * What a call needing a session gets without a live one: UNAUTHENTICATED, with this header when the browser's cookie named a session that no longer lives
 * (signed out elsewhere, expired, or a member it covered was removed), so the sign-in page can say
 * the session ended rather than greet a first visit (docs/console.md, "Signing in").
 */
export const sessionEndedHeader = "testrun-session";
export const signedOut = (hadSession = false) =>
  new ConnectError(
    hadSession ? "the session ended" : "not signed in",
    Code.Unauthenticated,
    hadSession ? { [sessionEndedHeader]: "ended" } : undefined,
  );
/**
 * GetSession's "nobody is signed in", from the refusal of a call without a live session (and
 * whether the browser's session ended); any other failure (the catalog unreachable) is thrown on.
 */
export function nobodySignedIn(error: unknown): { signedIn: false; sessionEnded: boolean } {
  if (!(error instanceof ConnectError) || error.code !== Code.Unauthenticated) throw error;
  return { signedIn: false, sessionEnded: error.metadata.get(sessionEndedHeader) === "ended" };
}

/** What every lookup outside the person's organizations gives: the same as an unknown id. */
export const notFound = (what: string) => new ConnectError(`${what} not found`, Code.NotFound);

/**
 * Resolves the person behind a console call, and the member they act as in an organization. A
 * session acts only as the members it covers (sessions.ts), read from the catalog on every call:
 * when any of them is no longer active, the session ends. (Removal in the console ends the member's
 * sessions, and this replica's live streams of them, at once: console-service.ts, removeMember. A
 * removal by testrunctl is seen here, at the session's next call.)
 */
export class Viewers {
  constructor(
    private readonly sessions: SessionStore,
    private readonly directory: Directory,
  ) {}

  async of(ctx: HandlerContext): Promise<Viewer> {
    return ctx.values.get(resolvedViewerKey) ?? this.ofSession(ctx.values.get(sessionCookieKey));
  }

  /** The person behind a session cookie's value (for the console's plain HTTP routes). */
  async ofSession(id: string | undefined): Promise<Viewer> {
    const session = id ? await this.sessions.resume(id) : undefined;
    if (!session) throw signedOut(Boolean(id));
    const memberships = await this.directory.activeMemberships(session.members);
    if (memberships.length < session.members.length) {
      await this.sessions.end(id as string);
      throw signedOut(true);
    }
    return { email: session.email, expiresAt: session.expiresAt, memberships };
  }

  /** The person's membership in an organization; NOT_FOUND when they have none there. */
  membershipIn(viewer: Viewer, organizationId: string): Membership {
    const membership = viewer.memberships.find((m) => m.organization.id === organizationId);
    if (!membership) throw notFound("organization");
    return membership;
  }

  /** The person's membership in the organization owning a project; NOT_FOUND otherwise. */
  async membershipForProject(viewer: Viewer, projectId: string): Promise<Membership> {
    const organizationId = await this.directory.organizationOfProject(projectId);
    const membership = viewer.memberships.find((m) => m.organization.id === organizationId);
    if (!organizationId || !membership) throw notFound("project");
    return membership;
  }

  /** The member actor of the signed-in person for one of their projects; NOT_FOUND otherwise. */
  async actorForProject(ctx: HandlerContext, projectId: string) {
    const membership = await this.membershipForProject(await this.of(ctx), projectId);
    return { membership, actor: actorOf(membership) };
  }

  /** The member's actor in a project, for a call the other service decides alone. */
  async actorIn(ctx: HandlerContext, projectId: string) {
    return (await this.actorForProject(ctx, projectId)).actor;
  }
}

/** A member actor for the services: the person acting as their member of one organization. */
export const actorOf = (membership: Membership) => ({
  kind: { case: "memberId" as const, value: membership.member.id },
});
