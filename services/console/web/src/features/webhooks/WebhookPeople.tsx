import type { Webhook } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { Time } from "../../components/Time";
import { changedByName } from "../../components/Version";
import { memberName } from "./people";

/** Who made it, who it acts for when someone else, and who last changed it: names (emails on hover). */
export function WebhookPeople({ webhook }: { webhook: Webhook }) {
  const creator = webhook.createdBy?.kind.case === "member" ? webhook.createdBy.kind.value : undefined;
  const actsFor = webhook.actsFor;
  const by = webhook.updatedBy?.kind;
  const changer = by?.case === "member" ? memberName(by.value) : changedByName(webhook.updatedBy);
  return (
    <span className="cell-lines">
      {creator ? (
        <span title={creator.email}>{memberName(creator)}</span>
      ) : (
        <span className="muted">not recorded</span>
      )}
      {actsFor && actsFor.memberId !== creator?.memberId && (
        <span className="small" title={actsFor.email}>
          acts for {memberName(actsFor)}
        </span>
      )}
      {changer && (
        <span className="small muted" title={by?.case === "member" ? by.value.email : undefined}>
          changed by {changer}, <Time at={webhook.updatedAt} />
        </span>
      )}
    </span>
  );
}
