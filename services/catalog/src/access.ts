import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Permission, Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Actor, ApiKeyActor } from "@testrun/gen/testrun/common/v1/actor_pb";
import { requireActor } from "@testrun/kit";
import { denied, invalid, notFound } from "./errors.js";
import { apiKeyMay, keyStillValid, memberMay, roleFromDb } from "./roles.js";
import {
  type MemberRow,
  memberColumns,
  type OrganizationRow,
  organizationColumns,
  type ProjectRow,
  projectColumns,
} from "./rows.js";
import { type Sql, withDates } from "./sql.js";

// Who may do what: every RPC that takes an actor goes through one of these before touching data.
// Each answers with one query: the item and the acting membership are read together.

/** An actor that passed its checks, and the role it acts with (UNSPECIFIED for an operator). */
export interface Granted {
  kind: "operator" | "member" | "apiKey";
  role: Role;
  /** The acting member (for an API key: its creator); unset for an operator. */
  member?: MemberRow;
}

export interface ProjectGrant extends Granted {
  project: ProjectRow;
}

export interface OrganizationGrant extends Granted {
  organization: OrganizationRow;
}

/** The actor's kind, once its fields are well-formed (INVALID_ARGUMENT otherwise). */
export function checkActor(actor: Actor | undefined): "operator" | "member" | "apiKey" {
  const kind = requireActor(actor);
  const value = actor?.kind;
  if (value?.case === "operator" && [...value.value.name].length > 100)
    throw invalid("actor.operator.name must be at most 100 characters");
  if (value?.case === "memberId" && !value.value) throw invalid("actor.member_id is required");
  if (value?.case === "apiKey") {
    const key = value.value;
    for (const [field, present] of [
      ["key_id", key.keyId],
      ["creator_member_id", key.creatorMemberId],
      ["project_id", key.projectId],
      ["key_created_at", key.keyCreatedAt],
    ] as const) {
      if (!present) throw invalid(`actor.api_key.${field} is required`);
    }
  }
  return kind === "memberId" ? "member" : (kind as "operator" | "apiKey");
}

/** Selects `columns` (like "p.id, p.name") renamed with a prefix, to read two rows as one. */
const prefixed = (columns: string, prefix: string) =>
  columns
    .split(",")
    .map((column) => `${column.trim()} as ${prefix}${column.trim().split(".")[1]}`)
    .join(", ");

/** The row whose columns carry `prefix`, or undefined when its id is null (no such row). */
function unprefixed<T>(row: Record<string, unknown>, prefix: string): T | undefined {
  if (row[`${prefix}id`] === null || row[`${prefix}id`] === undefined) return undefined;
  return Object.fromEntries(
    Object.entries(row)
      .filter(([name]) => name.startsWith(prefix))
      .map(([name, value]) => [name.slice(prefix.length), value]),
  ) as T;
}

const activeMemberRequired = (id: string) => denied(`${id} is not an active member`);

/** The acting member itself: unknown or removed members may do nothing. */
function actingMember(member: MemberRow | undefined, id: string): MemberRow {
  if (!member || member.removed_at) throw activeMemberRequired(id);
  return member;
}

/** Why an API key may not act, or undefined when its creator still backs it for `permission`. */
function refuseKey(
  key: ApiKeyActor,
  creator: MemberRow | undefined,
  project: ProjectRow,
  permission: Permission,
): string | undefined {
  const createdAt = key.keyCreatedAt ? timestampDate(key.keyCreatedAt) : new Date(0);
  const backed =
    creator !== undefined &&
    creator.organization_id === project.organization_id &&
    keyStillValid(
      { role: roleFromDb(creator.role), active: !creator.removed_at, rightsLostAt: creator.rights_lost_at },
      createdAt,
    );
  // Worded as the gateway words it once the keys service knows (docs/rest-api.md,
  // "Authentication"): the client cannot tell which of the two refused the key.
  if (!backed)
    return permission === Permission.START_RUN
      ? "the key's creator can no longer start runs"
      : "the key's creator is no longer an Editor or above, so the key no longer works; create a new key";
  if (!apiKeyMay(permission)) return "an API key may only read the project's content and start runs";
  return undefined;
}

const needs: Record<Permission, string> = {
  [Permission.UNSPECIFIED]: "",
  [Permission.READ]: "reading the project needs membership of its organization",
  [Permission.READ_SETTINGS]: "reading the project's settings needs membership of its organization",
  [Permission.START_RUN]: "starting runs needs the EDITOR role or above",
  [Permission.EDIT]: "changing the project needs the EDITOR role or above",
  [Permission.ADMIN]: "managing the project needs the ADMIN role or above",
};

/**
 * Checks that `actor` may do `permission` in project `projectId`: NOT_FOUND when the project does
 * not exist or is outside what the actor sees (another organization's for a member, any other
 * project for an API key), PERMISSION_DENIED when it sees it but may not.
 *
 * An API key is checked against its creator's membership here, on every call, and not only by the
 * keys service: a key created before its creator lost EDITOR-or-above rights is refused at once,
 * even while the keys service has not yet been told of the loss (see outbox.ts).
 */
export async function authorizeProject(
  sql: Sql,
  actor: Actor | undefined,
  projectId: string,
  permission: Permission,
): Promise<ProjectGrant> {
  return (await checkProject(sql, actor, projectId, permission)).grant;
}

/** Rows of a project read with its access check: `select` reads them over the project's id (`p.id`). */
export interface Listing {
  select: string;
  /** Columns of the selected rows that order them. */
  orderBy: string;
  /** Values of the `?` in `select`, in order. */
  params?: readonly unknown[];
}

/**
 * `authorizeProject`, and in the same statement the rows of each listing (by name): a check and
 * its reads in one round trip. The rows are read whatever the check says, and returned only when
 * it passes.
 */
export async function authorizeProjectListings<R extends Record<string, object | undefined>>(
  sql: Sql,
  actor: Actor | undefined,
  projectId: string,
  permission: Permission,
  listings: { [N in keyof R]: Listing },
): Promise<{ grant: ProjectGrant; rows: { [N in keyof R]: NonNullable<R[N]>[] } }> {
  // A listing left out (an optional one) is neither read nor answered.
  const names = (Object.keys(listings) as (keyof R & string)[]).filter((name) => listings[name]);
  const columns = names.map((name, index) => {
    const { select, orderBy } = listings[name] as Listing;
    const order = orderBy
      .split(",")
      .map((column) => `listed.${column.trim()}`)
      .join(", ");
    return `(select coalesce(json_agg(listed order by ${order}), '[]') from (${select}) as listed) as listed_${index}`;
  });
  const { grant, row } = await checkProject(sql, actor, projectId, permission, {
    select: columns.join(", "),
    params: names.flatMap((name) => (listings[name] as Listing).params ?? []),
  });
  const rows = Object.fromEntries(
    names.map((name, index) => [
      name,
      withDates((row?.[`listed_${index}`] as Record<string, unknown>[] | undefined) ?? []),
    ]),
  ) as { [N in keyof R]: NonNullable<R[N]>[] };
  return { grant, rows };
}

async function checkProject(
  sql: Sql,
  actor: Actor | undefined,
  projectId: string,
  permission: Permission,
  extraColumn?: { select: string; params: readonly unknown[] },
): Promise<{ grant: ProjectGrant; row: Record<string, unknown> | undefined }> {
  const kind = checkActor(actor);
  if (permission === Permission.UNSPECIFIED) throw invalid("permission is required");
  const missing = () => notFound(`project ${projectId || "(empty id)"} not found`);
  const key = actor?.kind.case === "apiKey" ? actor.kind.value : undefined;
  // A key works in its own project only; any other project does not exist for it.
  if (key && key.projectId !== projectId) throw missing();
  const memberId = actor?.kind.case === "memberId" ? actor.kind.value : key ? key.creatorMemberId : "";

  const row = await sql.one<Record<string, unknown>>(
    `select ${prefixed(projectColumns, "p_")}, ${prefixed(memberColumns, "m_")}${extraColumn ? `, ${extraColumn.select}` : ""}
     from (select 1) as one
     left join catalog.projects p on p.id = ?
     left join catalog.members m on m.id = ?`,
    [...(extraColumn?.params ?? []), projectId, memberId],
  );
  const project = row && unprefixed<ProjectRow>(row, "p_");
  const member = row && unprefixed<MemberRow>(row, "m_");

  if (kind === "member") {
    const acting = actingMember(member, memberId);
    if (!project || acting.organization_id !== project.organization_id) throw missing();
    const role = roleFromDb(acting.role);
    if (!memberMay(role, permission)) throw denied(needs[permission]);
    return { grant: { kind, role, member: acting, project }, row };
  }
  if (!project) throw missing();
  if (key) {
    const refusal = refuseKey(key, member, project, permission);
    if (refusal) throw denied(refusal);
    return {
      grant: { kind, role: member ? roleFromDb(member.role) : Role.UNSPECIFIED, member, project },
      row,
    };
  }
  return { grant: { kind, role: Role.UNSPECIFIED, project }, row };
}

/**
 * Checks that `actor` may act in organization `organizationId`: operators always, members of that
 * organization (others get NOT_FOUND) when `adminOnly` is false or they are ADMIN or above; API
 * keys never (PERMISSION_DENIED).
 */
export async function authorizeOrganization(
  sql: Sql,
  actor: Actor | undefined,
  organizationId: string,
  adminOnly: boolean,
): Promise<OrganizationGrant> {
  const kind = checkActor(actor);
  if (kind === "apiKey") throw denied("an API key may only act inside its project");
  const memberId = actor?.kind.case === "memberId" ? actor.kind.value : "";
  const row = await sql.one<Record<string, unknown>>(
    `select ${prefixed(organizationColumns, "o_")}, ${prefixed(memberColumns, "m_")}
     from (select 1) as one
     left join catalog.organizations o on o.id = ?
     left join catalog.members m on m.id = ?`,
    [organizationId, memberId],
  );
  const organization = row && unprefixed<OrganizationRow>(row, "o_");
  const missing = () => notFound(`organization ${organizationId || "(empty id)"} not found`);
  if (kind === "operator") {
    if (!organization) throw missing();
    return { kind, role: Role.UNSPECIFIED, organization };
  }
  const acting = actingMember(row && unprefixed<MemberRow>(row, "m_"), memberId);
  if (!organization || acting.organization_id !== organization.id) throw missing();
  const role = roleFromDb(acting.role);
  if (adminOnly && role < Role.ADMIN) throw denied("this needs the ADMIN role or above");
  return { kind, role, member: acting, organization };
}

/**
 * The acting side of a call about one member (GetMember, ChangeMemberRole, RemoveMember): an
 * operator, or an active member of the target's organization (NOT_FOUND for any other). Returns
 * the target too.
 */
export async function authorizeMemberTarget(
  sql: Sql,
  actor: Actor | undefined,
  targetId: string,
): Promise<{ grant: Granted; target: MemberRow }> {
  const kind = checkActor(actor);
  if (kind === "apiKey") throw denied("an API key may only act inside its project");
  const memberId = actor?.kind.case === "memberId" ? actor.kind.value : "";
  const row = await sql.one<Record<string, unknown>>(
    `select ${prefixed(memberColumns.replace(/\bm\./g, "t."), "t_")}, ${prefixed(memberColumns, "m_")}
     from (select 1) as one
     left join catalog.members m on m.id = ?
     left join catalog.members t on t.id = ?`,
    [memberId, targetId],
  );
  const target = row && unprefixed<MemberRow>(row, "t_");
  const missing = () => notFound(`member ${targetId || "(empty id)"} not found`);
  if (kind === "operator") {
    if (!target) throw missing();
    return { grant: { kind, role: Role.UNSPECIFIED }, target };
  }
  const acting = actingMember(row && unprefixed<MemberRow>(row, "m_"), memberId);
  if (!target || target.organization_id !== acting.organization_id) throw missing();
  return { grant: { kind, role: roleFromDb(acting.role), member: acting }, target };
}
