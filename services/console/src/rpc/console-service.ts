import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Client, ServiceImpl } from "@connectrpc/connect";
import type { CatalogService, Member } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import type { ApiKey, KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import type { OidcBindings } from "../auth/oidc-bindings.js";
import type { SessionStore } from "../auth/sessions.js";
import { actorOf, nobodySignedIn, type Viewers } from "../viewer.js";
import { authoringHandlers } from "./authoring-handlers.js";
import { type AutomationHandlerDeps, automationHandlers } from "./automation-handlers.js";
import { contentDocumentHandlers } from "./content-document-handlers.js";
import { contentHandlers } from "./content-handlers.js";
import { failureHandlers } from "./failure-handlers.js";
import { healthHandlers } from "./health-handlers.js";
import { relay } from "./relay.js";
import { type RunHandlerDeps, runHandlers } from "./run-handlers.js";

export interface ConsoleDeps extends RunHandlerDeps, AutomationHandlerDeps {
  viewers: Viewers;
  sessions: SessionStore;
  catalog: Client<typeof CatalogService>;
  keys: Client<typeof KeysService>;
  /** What the console's curl examples call (API_URL). */
  apiUrl: string;
  /** Who grants credits (OPERATOR_CONTACT; "" when not configured). */
  operatorContact: string;
  /** Host of the OIDC issuer, when OIDC sign-in is configured. */
  oidcProvider?: string;
  /** Members bound to OpenID subjects, when OIDC sign-in is configured. */
  bindings?: OidcBindings;
}

/** Most members read in one page (ListMembers caps pages at 1000). */
const memberPage = 1000;

/**
 * ConsoleService: every method but GetSignInOptions first resolves the signed-in person, then acts
 * as their member of the organization concerned (GetSession answers "nobody" without one). Keys and
 * catalog decide what that member may do.
 */
export function consoleService(deps: ConsoleDeps): ServiceImpl<typeof ConsoleService> {
  const { viewers, catalog, keys } = deps;

  /** Every member of an organization (removed ones too, when naming key creators). */
  const membersOf = async (
    actor: ReturnType<typeof actorOf>,
    organizationId: string,
    includeRemoved: boolean,
  ) => {
    const members: Member[] = [];
    let pageToken = "";
    do {
      const page = await relay(
        catalog.listMembers({ actor, organizationId, includeRemoved, pageSize: memberPage, pageToken }),
      );
      members.push(...page.members);
      pageToken = page.nextPageToken;
    } while (pageToken);
    return members;
  };

  const entry = (key: ApiKey | undefined, creators: Map<string, Member>) => {
    const creator = key ? creators.get(key.creatorMemberId) : undefined;
    return { key, creatorName: creator?.displayName ?? "", creatorEmail: creator?.email ?? "" };
  };

  return {
    ...runHandlers(deps),
    ...contentHandlers(deps),
    ...authoringHandlers(deps),
    ...contentDocumentHandlers(deps),
    ...automationHandlers(deps),
    ...healthHandlers(deps),
    ...failureHandlers(deps),

    getSignInOptions: () => ({
      oidcEnabled: deps.oidcProvider !== undefined,
      oidcProvider: deps.oidcProvider ?? "",
    }),

    async getSession(_req, ctx) {
      // Nobody signed in is an answer here, not an error: every visitor not signed in yet asks
      // (the sign-in link's page, the app's frame), and a browser logs each failed call.
      const viewer = await viewers.of(ctx).catch(nobodySignedIn);
      if (!("email" in viewer)) return viewer;
      return {
        signedIn: true,
        email: viewer.email,
        memberships: viewer.memberships,
        expiresAt: timestampFromDate(viewer.expiresAt),
        apiUrl: deps.apiUrl,
        operatorContact: deps.operatorContact,
      };
    },

    async signOutEverywhere(_req, ctx) {
      const viewer = await viewers.of(ctx);
      const ended = await deps.sessions.endCovering(viewer.memberships.map((m) => m.member.id));
      deps.streams.closeSessions(ended);
      return { endedSessions: ended.length };
    },

    async listProjects(req, ctx) {
      const membership = viewers.membershipIn(await viewers.of(ctx), req.organizationId);
      const projects = [];
      let pageToken = "";
      do {
        const page = await relay(
          catalog.listProjects({
            actor: actorOf(membership),
            organizationId: req.organizationId,
            pageSize: 1000,
            pageToken,
          }),
        );
        projects.push(...page.projects);
        pageToken = page.nextPageToken;
      } while (pageToken);
      return { projects };
    },

    async getProject(req, ctx) {
      const viewer = await viewers.of(ctx);
      const membership = await viewers.membershipForProject(viewer, req.projectId);
      const { project } = await relay(
        catalog.getProject({ actor: actorOf(membership), projectId: req.projectId }),
      );
      return { project, organization: membership.organization, role: membership.member.role };
    },

    async listApiKeys(req, ctx) {
      const membership = await viewers.membershipForProject(await viewers.of(ctx), req.projectId);
      const actor = actorOf(membership);
      const [listed, members] = await Promise.all([
        relay(keys.listKeys({ actor, projectId: req.projectId, kind: req.kind })),
        membersOf(actor, membership.organization.id, true),
      ]);
      const creators = new Map(members.map((m) => [m.id, m]));
      return { keys: listed.keys.map((key) => entry(key, creators)) };
    },

    async createApiKey(req, ctx) {
      const membership = await viewers.membershipForProject(await viewers.of(ctx), req.projectId);
      const created = await relay(
        keys.createKey({
          actor: actorOf(membership),
          projectId: req.projectId,
          name: req.name,
          expiry: req.expiry,
          kind: req.kind,
        }),
      );
      const creators = new Map([[membership.member.id, membership.member]]);
      return { key: entry(created.key, creators), secret: created.secret };
    },

    async revokeApiKey(req, ctx) {
      const membership = await viewers.membershipForProject(await viewers.of(ctx), req.projectId);
      const actor = actorOf(membership);
      const revoked = await relay(keys.revokeKey({ actor, projectId: req.projectId, keyId: req.keyId }));
      const creator = revoked.key ? await memberOrNothing(revoked.key.creatorMemberId) : undefined;
      return { key: entry(revoked.key, new Map(creator ? [[creator.id, creator]] : [])) };

      async function memberOrNothing(memberId: string) {
        try {
          return (await catalog.getMember({ actor, memberId })).member;
        } catch {
          return undefined;
        }
      }
    },

    async listMembers(req, ctx) {
      const membership = viewers.membershipIn(await viewers.of(ctx), req.organizationId);
      return { members: await membersOf(actorOf(membership), req.organizationId, false) };
    },

    async addMember(req, ctx) {
      const membership = viewers.membershipIn(await viewers.of(ctx), req.organizationId);
      const { member } = await relay(
        catalog.addMember({
          actor: actorOf(membership),
          organizationId: req.organizationId,
          email: req.email,
          displayName: req.displayName,
          role: req.role,
        }),
      );
      return { member };
    },

    async changeMemberRole(req, ctx) {
      const membership = viewers.membershipIn(await viewers.of(ctx), req.organizationId);
      const actor = actorOf(membership);
      const { member } = await relay(
        catalog.changeMemberRole({ actor, memberId: req.memberId, role: req.role }),
      );
      return { member };
    },

    async removeMember(req, ctx) {
      const membership = viewers.membershipIn(await viewers.of(ctx), req.organizationId);
      const { member } = await relay(
        catalog.removeMember({ actor: actorOf(membership), memberId: req.memberId }),
      );
      // Their sessions end now, not at their next call (which would also refuse them), with this
      // replica's live streams of them: a member added back soon after must sign in again. The
      // OpenID subject bound to them is forgotten: whoever is added back is bound afresh.
      deps.streams.closeSessions(await deps.sessions.endCovering([req.memberId]));
      await deps.bindings?.unbind([req.memberId]);
      return { member };
    },
  };
}
