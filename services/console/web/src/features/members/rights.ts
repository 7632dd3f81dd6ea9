// What the signed-in member may do to the organization's members, and the change they asked for.
import { type Member, Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { canAdminister, roleName } from "../../format";

export const roles = [Role.VIEWER, Role.EDITOR, Role.ADMIN, Role.OWNER];
export const keysWarning =
  "Removing or demoting an Editor kills the API keys they created, for good: pipelines using them will get 401/403. Regaining the role does not bring those keys back.";

export type Pending =
  | { kind: "remove"; member: Member }
  | { kind: "leave"; member: Member }
  | { kind: "role"; member: Member; role: Role };

/**
 * What the signed-in member may do to each row, by the catalog's rules (roles.ts there): Admins and
 * Owners change roles and remove, only an Owner gives, takes or changes Owner, anyone may leave,
 * and nobody leaves the organization without an active Owner. The catalog refuses the rest anyway.
 */
export function rowRights(me: Member, members: readonly Member[]) {
  const owners = members.filter((m) => m.role === Role.OWNER).length;
  /** The organization's only active Owner (ListMembers answers every active member). */
  const soleOwner = (member: Member) => member.role === Role.OWNER && owners === 1;
  const admin = canAdminister(me.role);
  const ownerActs = me.role === Role.OWNER;
  return {
    soleOwner,
    roleChoices: (member: Member): Role[] => {
      if (!admin || soleOwner(member) || (member.role === Role.OWNER && !ownerActs)) return [];
      return ownerActs ? roles : roles.filter((role) => role !== Role.OWNER);
    },
    mayRemove: (member: Member) =>
      member.id === me.id
        ? !soleOwner(member)
        : admin && (member.role !== Role.OWNER || ownerActs) && !soleOwner(member),
  };
}

/** The confirming dialog's title. */
export function pendingTitle(pending: Pending | undefined, organizationName: string): string {
  if (!pending) return "";
  if (pending.kind === "leave") return `Leave ${organizationName}?`;
  if (pending.kind === "remove") return `Remove ${pending.member.displayName}?`;
  const role = roleName[pending.role];
  return `Make ${pending.member.displayName} ${/^[AEIOU]/.test(role) ? "an" : "a"} ${role}?`;
}
