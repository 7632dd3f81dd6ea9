import { newId, requireOperator } from "@testrun/kit";
import { authorizeOrganization, checkActor } from "../access.js";
import { denied, Violations } from "../errors.js";
import { pageOf, readPage } from "../paging.js";
import {
  type MemberRow,
  memberColumns,
  memberToProto,
  type OrganizationRow,
  organizationColumns,
  organizationToProto,
} from "../rows.js";
import { checkEmail, checkName } from "../validate.js";
import type { Deps, Handlers } from "./context.js";

/** CreateOrganization, GetOrganization, ListOrganizations. */
export function organizationHandlers({ db }: Deps): Handlers {
  return {
    async createOrganization(req) {
      requireOperator(req.actor);
      checkActor(req.actor);
      const violations = new Violations();
      const name = checkName(req.name, "name", violations);
      const owner =
        req.ownerEmail === undefined
          ? undefined
          : {
              email: checkEmail(req.ownerEmail, "owner_email", violations),
              displayName: checkName(req.ownerDisplayName, "owner_display_name", violations),
            };
      if (!owner && req.ownerDisplayName)
        violations.add("owner_display_name", "is only used together with owner_email");
      violations.check();

      return db.write(async (sql) => {
        const now = new Date();
        const organization = await sql.one<OrganizationRow>(
          `insert into catalog.organizations as o (id, name, created_at) values (?, ?, ?)
           returning ${organizationColumns}`,
          [newId("org"), name, now],
        );
        const member =
          owner &&
          (await sql.one<MemberRow>(
            `insert into catalog.members as m (id, organization_id, email, display_name, role, created_at)
             values (?, ?, ?, ?, 'owner', ?) returning ${memberColumns}`,
            [newId("mem"), organization?.id, owner.email, owner.displayName, now],
          ));
        return {
          organization: organizationToProto(organization as OrganizationRow),
          owner: member ? memberToProto(member) : undefined,
        };
      });
    },

    async getOrganization(req) {
      const { organization } = await db.read((sql) =>
        authorizeOrganization(sql, req.actor, req.organizationId, false),
      );
      return { organization: organizationToProto(organization) };
    },

    async listOrganizations(req) {
      const kind = checkActor(req.actor);
      if (kind === "apiKey") throw denied("an API key may only act inside its project");
      const page = readPage(req.pageSize, req.pageToken, "o");
      const rows = await db.read(async (sql) => {
        if (kind === "operator")
          return sql.all<OrganizationRow>(
            `select ${organizationColumns} from catalog.organizations o where ${page.after.where}
             order by o.created_at, o.id limit ?`,
            [...page.after.params, page.limit],
          );
        // A member sees its own organization, and only while its membership is active.
        const memberId = req.actor?.kind.case === "memberId" ? req.actor.kind.value : "";
        const member = await sql.one<{ organization_id: string }>(
          "select organization_id from catalog.members where id = ? and removed_at is null",
          [memberId],
        );
        if (!member) throw denied(`${memberId} is not an active member`);
        return sql.all<OrganizationRow>(
          `select ${organizationColumns} from catalog.organizations o where o.id = ? and ${page.after.where}
           order by o.created_at, o.id limit ?`,
          [member.organization_id, ...page.after.params, page.limit],
        );
      });
      const { items, nextPageToken } = pageOf(rows, page);
      return { organizations: items.map(organizationToProto), nextPageToken };
    },
  };
}
