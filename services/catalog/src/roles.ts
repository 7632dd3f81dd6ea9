import { Permission, Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { MemberRole } from "./db/entities.js";

// The rights table of proto/testrun/common/v1/actor.proto, as pure functions. Roles rank
// OWNER > ADMIN > EDITOR > VIEWER; each has the rights of those below it. An operator may do
// everything (except read variable values, which is not a matter of roles); these rules are about
// members and, through their creators, API keys.

const fromDb: Record<MemberRole, Role> = {
  owner: Role.OWNER,
  admin: Role.ADMIN,
  editor: Role.EDITOR,
  viewer: Role.VIEWER,
};

export const roleFromDb = (role: MemberRole): Role => fromDb[role];

export function roleToDb(role: Role): MemberRole {
  switch (role) {
    case Role.OWNER:
      return "owner";
    case Role.ADMIN:
      return "admin";
    case Role.EDITOR:
      return "editor";
    case Role.VIEWER:
      return "viewer";
    default:
      throw new Error(`no such role: ${role}`);
  }
}

export const isRole = (role: Role): boolean =>
  role === Role.OWNER || role === Role.ADMIN || role === Role.EDITOR || role === Role.VIEWER;

/** Whether a member with `role` has `permission` in every project of its organization. */
export function memberMay(role: Role, permission: Permission): boolean {
  switch (permission) {
    case Permission.READ:
    case Permission.READ_SETTINGS:
      return role >= Role.VIEWER;
    case Permission.START_RUN:
    case Permission.EDIT:
      return role >= Role.EDITOR;
    case Permission.ADMIN:
      return role >= Role.ADMIN;
    default:
      return false;
  }
}

/** What an API key may do for its creator: read content and start runs, nothing else. */
export const apiKeyMay = (permission: Permission): boolean =>
  permission === Permission.READ || permission === Permission.START_RUN;

/** Whether a role has the rights whose loss kills the member's API keys (EDITOR or above). */
export const hasKeyRights = (role: Role): boolean => role >= Role.EDITOR;

/** A change of role that loses those rights: EDITOR-or-above to VIEWER. */
export const losesKeyRights = (from: Role, to: Role): boolean => hasKeyRights(from) && !hasKeyRights(to);

/** `null` when allowed, else why not. `actor` is the acting member's role, or "operator". */
export type Verdict = string | null;
type ActingRole = Role | "operator";

/** AddMember: ADMIN or above; adding an OWNER needs an OWNER. */
export function mayAddMember(actor: ActingRole, role: Role): Verdict {
  if (actor === "operator") return null;
  if (actor < Role.ADMIN) return "adding members needs the ADMIN or OWNER role";
  if (role === Role.OWNER && actor !== Role.OWNER) return "only an OWNER may add an OWNER";
  return null;
}

/** ChangeMemberRole: ADMIN or above; giving or taking OWNER, or changing an OWNER, needs an OWNER. */
export function mayChangeRole(actor: ActingRole, current: Role, next: Role): Verdict {
  if (actor === "operator") return null;
  if (actor < Role.ADMIN) return "changing roles needs the ADMIN or OWNER role";
  if ((current === Role.OWNER || next === Role.OWNER) && actor !== Role.OWNER)
    return "only an OWNER may give, take or change the OWNER role";
  return null;
}

/** RemoveMember: ADMIN or above, or the member itself; removing an OWNER needs an OWNER (or itself). */
export function mayRemove(actor: ActingRole, target: Role, self: boolean): Verdict {
  if (actor === "operator" || self) return null;
  if (actor < Role.ADMIN) return "removing members needs the ADMIN or OWNER role";
  if (target === Role.OWNER && actor !== Role.OWNER) return "only an OWNER may remove an OWNER";
  return null;
}

/**
 * Whether an API key still acts for its creator: the creator is an active EDITOR-or-above member
 * and has not lost those rights at or after the key's creation (a key created before a loss stays
 * dead even after the creator regains the role).
 */
export function keyStillValid(
  creator: { role: Role; active: boolean; rightsLostAt: Date | null },
  keyCreatedAt: Date,
): boolean {
  if (!creator.active || !hasKeyRights(creator.role)) return false;
  return creator.rightsLostAt === null || creator.rightsLostAt.getTime() < keyCreatedAt.getTime();
}
