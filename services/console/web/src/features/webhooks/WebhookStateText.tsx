import type { Webhook } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { deliveryStateName } from "../../automation-format";
import { Badge } from "../../components/Status";
import { sentence } from "../../format";

/** Active or paused (and why, when the system paused it), and how its last delivery went. */
export function WebhookStateText({ webhook }: { webhook: Webhook }) {
  return (
    <span className="cell-lines">
      <Badge tone={webhook.pausedReason ? "bad" : webhook.paused ? "neutral" : "good"}>
        {webhook.paused ? "Paused" : "Active"}
      </Badge>
      {webhook.pausedReason && <span className="small">{sentence(webhook.pausedReason)}</span>}
      {webhook.lastDeliveryState !== undefined && (
        <span className="small muted">
          Last delivery: {deliveryStateName[webhook.lastDeliveryState].toLowerCase()}
        </span>
      )}
    </span>
  );
}
