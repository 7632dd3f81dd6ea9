import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { newId, requireOperator } from "@testrun/kit";
import { authorizeMemberTarget, authorizeOrganization, checkActor, type Granted } from "../access.js";
import { alreadyExists, denied, failedPrecondition, Violations } from "../errors.js";
import { pageOf, readPage } from "../paging.js";
import {
  hasKeyRights,
  isRole,
  losesKeyRights,
  mayAddMember,
  mayChangeRole,
  mayRemove,
  roleFromDb,
  roleToDb,
} from "../roles.js";
import { type MemberRow, memberColumns, memberToProto, organizationToProto } from "../rows.js";
import { type Sql, violatesUnique } from "../sql.js";
import { checkEmail, checkName } from "../validate.js";
import type { Deps, Handlers } from "./context.js";

const acting = (grant: Granted) => (grant.kind === "operator" ? "operator" : grant.role);

function requireRole(role: Role, field: string): void {
  if (!isRole(role)) {
    const violations = new Violations();
    violations.add(field, "must be one of ROLE_OWNER, ROLE_ADMIN, ROLE_EDITOR, ROLE_VIEWER");
    violations.check();
  }
}

/**
 * Every change to an organization's members first locks the organization's row, so changes of one
 * organization happen one at a time: "at least one active OWNER" and the email rules are checked
 * against a membership that cannot move underneath.
 */
async function lockOrganization(sql: Sql, organizationId: string): Promise<void> {
  await sql.all("select id from catalog.organizations where id = ? for update", [organizationId]);
}

async function lockOrganizationOfMember(sql: Sql, memberId: string): Promise<void> {
  await sql.all(
    `select o.id from catalog.organizations o join catalog.members m on m.organization_id = o.id
     where m.id = ? for update of o`,
    [memberId],
  );
}

/** FAILED_PRECONDITION unless another active OWNER than `memberId` remains. */
async function requireAnotherOwner(sql: Sql, member: MemberRow): Promise<void> {
  const other = await sql.one(
    `select 1 from catalog.members where organization_id = ? and id <> ? and role = 'owner' and removed_at is null
     limit 1`,
    [member.organization_id, member.id],
  );
  if (!other) throw failedPrecondition("the organization would be left without an active OWNER");
}

/** AddMember, GetMember, ListMembers, ChangeMemberRole, RemoveMember. */
export function memberHandlers({ db, outbox, announceAccessChange }: Deps): Handlers {
  /**
   * Commits a change of a member's rights with its keys notification (when it kills keys), then
   * delivers the notification and announces the change to cached grants elsewhere.
   */
  const withLoss = async (
    work: (sql: Sql, queue: (memberId: string, at: Date) => Promise<void>) => Promise<MemberRow>,
  ) => {
    const queued: string[] = [];
    const member = await db.write((sql) =>
      work(sql, async (memberId, at) => {
        queued.push(await outbox.enqueueMemberLoss(sql, memberId, at));
      }),
    );
    // The epoch first: the keys service's delivery may wait for its timeout.
    await announceAccessChange();
    await outbox.deliver(queued);
    return { member: memberToProto(member) };
  };

  return {
    async addMember(req) {
      try {
        return await db.write(async (sql) => {
          await lockOrganization(sql, req.organizationId);
          const grant = await authorizeOrganization(sql, req.actor, req.organizationId, true);
          const violations = new Violations();
          const email = checkEmail(req.email, "email", violations);
          const displayName = checkName(req.displayName, "display_name", violations);
          if (!isRole(req.role))
            violations.add("role", "must be one of ROLE_OWNER, ROLE_ADMIN, ROLE_EDITOR, ROLE_VIEWER");
          violations.check();
          const refusal = mayAddMember(acting(grant), req.role);
          if (refusal) throw denied(refusal);

          const existing = await sql.one<MemberRow>(
            `select ${memberColumns} from catalog.members m where m.organization_id = ? and m.email = ?`,
            [req.organizationId, email],
          );
          if (existing && !existing.removed_at)
            throw alreadyExists(`an active member of the organization already has the email ${email}`);
          if (existing) {
            // Back with the same id; rights_lost_at stays, so keys it created before remain dead.
            const member = await sql.one<MemberRow>(
              `update catalog.members m set email = ?, display_name = ?, role = ?, removed_at = null
               where m.id = ? returning ${memberColumns}`,
              [email, displayName, roleToDb(req.role), existing.id],
            );
            return { member: memberToProto(member as MemberRow) };
          }
          const member = await sql.one<MemberRow>(
            `insert into catalog.members as m (id, organization_id, email, display_name, role, created_at)
             values (?, ?, ?, ?, ?, ?) returning ${memberColumns}`,
            [newId("mem"), req.organizationId, email, displayName, roleToDb(req.role), new Date()],
          );
          return { member: memberToProto(member as MemberRow) };
        });
      } catch (error) {
        // Two concurrent adds cannot both pass the lock; this is the backstop of the unique index.
        if (violatesUnique(error, "members_organization_email_unique"))
          throw alreadyExists("a member of the organization already has this email");
        throw error;
      }
    },

    async getMember(req) {
      const { target } = await db.read((sql) => authorizeMemberTarget(sql, req.actor, req.memberId));
      return { member: memberToProto(target) };
    },

    async findMembersByEmail(req) {
      requireOperator(req.actor);
      checkActor(req.actor);
      // The stored form, compared exactly: what does not normalise to an address matches nobody.
      const violations = new Violations();
      const email = checkEmail(req.email, "email", violations);
      violations.check();
      const rows = await db.read((sql) =>
        sql.all<MemberRow & { org_name: string; org_created_at: Date }>(
          `select ${memberColumns}, o.name as org_name, o.created_at as org_created_at
           from catalog.members m join catalog.organizations o on o.id = m.organization_id
           where m.email = ? and m.removed_at is null
           order by lower(o.name), o.id`,
          [email],
        ),
      );
      return {
        members: rows.map(memberToProto),
        organizations: rows.map((row) =>
          organizationToProto({
            id: row.organization_id,
            name: row.org_name,
            created_at: row.org_created_at,
          }),
        ),
      };
    },

    async listMembers(req) {
      const rows = await db.read(async (sql) => {
        await authorizeOrganization(sql, req.actor, req.organizationId, false);
        const page = readPage(req.pageSize, req.pageToken, "m");
        const rows = await sql.all<MemberRow>(
          `select ${memberColumns} from catalog.members m
           where m.organization_id = ? and (? or m.removed_at is null) and ${page.after.where}
           order by m.created_at, m.id limit ?`,
          [req.organizationId, req.includeRemoved, ...page.after.params, page.limit],
        );
        return pageOf(rows, page);
      });
      return { members: rows.items.map(memberToProto), nextPageToken: rows.nextPageToken };
    },

    changeMemberRole: (req) =>
      withLoss(async (sql, queueLoss) => {
        await lockOrganizationOfMember(sql, req.memberId);
        const { grant, target } = await authorizeMemberTarget(sql, req.actor, req.memberId);
        if (grant.kind === "member" && grant.role < Role.ADMIN)
          throw denied("changing roles needs the ADMIN or OWNER role");
        requireRole(req.role, "role");
        const current = roleFromDb(target.role);
        const refusal = mayChangeRole(acting(grant), current, req.role);
        if (refusal) throw denied(refusal);
        if (target.removed_at)
          throw failedPrecondition(`member ${target.id} was removed; add it again instead`);
        if (current === req.role) return target;
        if (current === Role.OWNER) await requireAnotherOwner(sql, target);

        const lostAt = losesKeyRights(current, req.role) ? new Date() : null;
        const member = await sql.one<MemberRow>(
          `update catalog.members m set role = ?, rights_lost_at = coalesce(?, m.rights_lost_at)
           where m.id = ? returning ${memberColumns}`,
          [roleToDb(req.role), lostAt, target.id],
        );
        if (lostAt) await queueLoss(target.id, lostAt);
        return member as MemberRow;
      }),

    removeMember: (req) =>
      withLoss(async (sql, queueLoss) => {
        await lockOrganizationOfMember(sql, req.memberId);
        const { grant, target } = await authorizeMemberTarget(sql, req.actor, req.memberId);
        const role = roleFromDb(target.role);
        const refusal = mayRemove(acting(grant), role, grant.member?.id === target.id);
        if (refusal) throw denied(refusal);
        if (target.removed_at) return target;
        if (role === Role.OWNER) await requireAnotherOwner(sql, target);

        const now = new Date();
        const lostAt = hasKeyRights(role) ? now : null;
        const member = await sql.one<MemberRow>(
          `update catalog.members m set removed_at = ?, rights_lost_at = coalesce(?, m.rights_lost_at)
           where m.id = ? returning ${memberColumns}`,
          [now, lostAt, target.id],
        );
        if (lostAt) await queueLoss(target.id, lostAt);
        return member as MemberRow;
      }),
  };
}
