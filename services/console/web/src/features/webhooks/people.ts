// How the webhook pages name a member.
import type { ChangedByMember } from "@testrun/gen/testrun/common/v1/actor_pb";

/** A member as the list names one: the name, or the id when the catalog could not say. */
export const memberName = (member: ChangedByMember | undefined) =>
  member ? member.displayName || `member ${member.memberId}` : "";
