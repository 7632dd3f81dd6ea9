import type { Schedule } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { tickTime } from "../../automation-format";
import { ErrorNotice } from "../../components/Dialog";

/** The next three times, live while the expression is typed. */
export function NextTicks({
  ticks,
  timeZone,
  pending,
  failed,
}: {
  ticks: Schedule["nextTicks"];
  timeZone: string;
  pending: boolean;
  failed: unknown;
}) {
  return (
    <section className="panel" aria-labelledby="next-ticks-heading" aria-live="polite" aria-busy={pending}>
      <h3 id="next-ticks-heading" className="small">
        Next runs
      </h3>
      {failed ? (
        <ErrorNotice error={failed} />
      ) : ticks.length === 0 ? (
        <p className="muted small">
          {pending ? "Working them out…" : "Fix the expression to see when it runs."}
        </p>
      ) : (
        <ol className="next-ticks" data-testid="next-ticks">
          {ticks.map((tick) => (
            <li key={`${tick.seconds}`}>{tickTime(tick, timeZone)}</li>
          ))}
        </ol>
      )}
    </section>
  );
}
