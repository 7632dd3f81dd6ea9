import { type Client, Code, ConnectError } from "@connectrpc/connect";
import type { CatalogService, Member, Organization } from "@testrun/gen/testrun/catalog/v1/catalog_pb";

/** The console looks people and projects up as an operator named "console" (audit logs say so). */
const asConsole = { kind: { case: "operator" as const, value: { name: "console" } } };

/** Projects never move between organizations, so what organization owns one can be remembered. */
const projectCacheSize = 10_000;

export interface Membership {
  member: Member;
  organization: Organization;
}

/**
 * What the console must know before it can act for someone: their memberships (who they are in
 * which organization) and which organization owns a project. Read-only lookups; every change is
 * made with a member actor so the owning services decide.
 */
export class Directory {
  private readonly projectOrganizations = new Map<string, string>();

  constructor(private readonly catalog: Client<typeof CatalogService>) {}

  /** The active memberships of an email, by organization name (none: not a member anywhere). */
  async membershipsOf(email: string): Promise<Membership[]> {
    const found = await this.catalog.findMembersByEmail({ actor: asConsole, email });
    return found.members.flatMap((member, i) => {
      const organization = found.organizations[i];
      return organization ? [{ member, organization }] : [];
    });
  }

  /**
   * The memberships of exactly these members that are still active (looked up by their stored
   * emails, one call per distinct email, and kept only when the id is one of them).
   */
  async activeMemberships(members: readonly { id: string; email: string }[]): Promise<Membership[]> {
    const ids = new Set(members.map((m) => m.id));
    const emails = [...new Set(members.map((m) => m.email))];
    const found = await Promise.all(emails.map((email) => this.membershipsOf(email)));
    return found.flat().filter((membership) => ids.has(membership.member.id));
  }

  /** A member, active or removed; undefined if unknown. */
  async member(memberId: string): Promise<Member | undefined> {
    try {
      return (await this.catalog.getMember({ actor: asConsole, memberId })).member;
    } catch (error) {
      if (ConnectError.from(error).code === Code.NotFound) return undefined;
      throw error;
    }
  }

  /** The organization owning a project; undefined if there is no such project. */
  async organizationOfProject(projectId: string): Promise<string | undefined> {
    const known = this.projectOrganizations.get(projectId);
    if (known) return known;
    try {
      const { project } = await this.catalog.getProject({ actor: asConsole, projectId });
      if (!project) return undefined;
      if (this.projectOrganizations.size >= projectCacheSize) this.projectOrganizations.clear();
      this.projectOrganizations.set(projectId, project.organizationId);
      return project.organizationId;
    } catch (error) {
      if (ConnectError.from(error).code === Code.NotFound) return undefined;
      throw error;
    }
  }
}
