import { create } from "@bufbuild/protobuf";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import {
  type CatalogService,
  type Member,
  MemberState,
  Role,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import {
  type Actor,
  ActorSchema,
  type ChangedBy,
  type ChangedByMember,
  ChangedByMemberSchema,
  ChangedBySchema,
} from "@testrun/gen/testrun/common/v1/actor_pb";

// The members automation acts for and names (docs/automation.md, "Acting member"): who made or
// changed a webhook, and why one was paused, as the catalog knows them now.

/** How the service asks the catalog on its own account (names, never rights). */
export const automationOperator: Actor = create(ActorSchema, {
  kind: { case: "operator", value: { name: "automation" } },
});

/** The calling member; INVALID_ARGUMENT for an operator, with `why` (what needs a member). */
export function memberOf(actor: Actor | undefined, why: string): string {
  if (actor?.kind.case !== "memberId") throw new ConnectError(why, Code.InvalidArgument);
  return actor.kind.value;
}

/**
 * The members of `ids`, removed ones too (GetMember), by id. One that cannot be read now is left
 * out: it is then shown by id alone, and a list never fails for a name.
 */
export async function membersById(
  catalog: Client<typeof CatalogService>,
  ids: Iterable<string | null | undefined>,
): Promise<Map<string, Member>> {
  const wanted = [...new Set([...ids].filter((id): id is string => Boolean(id)))];
  const found = await Promise.all(
    wanted.map((memberId) =>
      catalog.getMember({ actor: automationOperator, memberId }, { timeoutMs: 5_000 }).then(
        (answer) => answer.member,
        () => undefined,
      ),
    ),
  );
  return new Map(found.flatMap((m) => (m ? [[m.id, m] as const] : [])));
}

/** A member as a ChangedByMember (its id alone when it could not be read). */
export function namedMember(memberId: string, members: Map<string, Member>): ChangedByMember {
  const member = members.get(memberId);
  return create(ChangedByMemberSchema, {
    memberId,
    displayName: member?.displayName ?? "",
    email: member?.email ?? "",
  });
}

/** Who changed something: a member, an operator by the name it gave, or undefined (not recorded). */
export function changedBy(
  memberId: string | null,
  operator: string | null,
  members: Map<string, Member>,
): ChangedBy | undefined {
  if (memberId)
    return create(ChangedBySchema, { kind: { case: "member", value: namedMember(memberId, members) } });
  if (operator !== null)
    return create(ChangedBySchema, { kind: { case: "operator", value: { name: operator } } });
  return undefined;
}

/** "its member Ana (ana@example.com)", or by id when the catalog cannot say (acts_for has the id). */
function describe(memberId: string, member: Member | undefined): string {
  return member ? `its member ${member.displayName} (${member.email})` : `its member ${memberId}`;
}

/**
 * Why a webhook acting for `memberId` was paused, as its list and delivery log say it: removed,
 * now a Viewer, or (the member unreadable, or another cause) no longer allowed, and what to do.
 */
export async function lostRightsReason(
  catalog: Client<typeof CatalogService>,
  memberId: string,
): Promise<string> {
  const member = (await membersById(catalog, [memberId])).get(memberId);
  const who = describe(memberId, member);
  const what =
    member?.state === MemberState.REMOVED
      ? `${who} was removed from the organization`
      : member?.role === Role.VIEWER
        ? `${who} is now a Viewer and can no longer manage webhooks`
        : `${who} can no longer manage webhooks in this project`;
  return `${what}; resume it to act for yourself`;
}
