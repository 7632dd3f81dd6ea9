import { cronInWords } from "../../automation-format";

/** The cron expression as typed, with its meaning in words when it is a common one, and its zone. */
export function CronText({ cron, timeZone }: { cron: string; timeZone: string }) {
  const words = cronInWords(cron);
  return (
    <span className="cell-lines">
      <span>
        <code>{cron}</code>
        {words && <span className="muted"> ({words})</span>}
      </span>
      <span className="muted small">{timeZone || "UTC"}</span>
    </span>
  );
}
