// Choosing another base: the project's latest finished runs on the run's environment (one page of
// ListRuns, the run itself left out), named in the URL's `?base=` when chosen, so the choice is a
// link to share. "Previous run" goes back to RunsService's own rule.
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type Run, RunStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { Link } from "react-router";
import { absoluteTime, dateOf, runStatusName } from "../../format";

/** As many runs as one ListRuns page holds: enough to pick a recent base from. */
const pageSize = 100;

const label = (run: Run) => {
  const at = dateOf(run.startedAt ?? run.createdAt);
  return `${run.id} · ${run.name} · ${runStatusName[run.status]}${at ? ` · ${absoluteTime(at)}` : ""}`;
};

export function BasePicker({
  projectId,
  run,
  baseId,
  named,
  onChoose,
}: {
  projectId: string;
  run: Pick<Run, "id" | "environmentId">;
  /** The base compared with now, if any: selected in the list. */
  baseId: string;
  /** Whether the URL names the base (then "Previous run" is offered). */
  named: boolean;
  onChoose: (baseId: string) => void;
}) {
  const runs = useQuery(ConsoleService.method.listRuns, {
    projectId,
    environmentId: run.environmentId,
    statuses: [RunStatus.PASSED, RunStatus.FAILED, RunStatus.SKIPPED],
    pageSize,
  });
  const choices = (runs.data?.runs ?? []).filter((r) => r.id !== run.id && r.finished);
  const listed = choices.some((r) => r.id === baseId);
  return (
    <form
      className="base-picker"
      aria-label="Choose the base run"
      onSubmit={(e) => {
        e.preventDefault();
        const chosen = String(new FormData(e.currentTarget).get("base") ?? "");
        if (chosen) onChoose(chosen);
      }}
    >
      <div className="field">
        <label htmlFor="compare-base">Compare with</label>
        <select
          id="compare-base"
          name="base"
          className="input"
          key={baseId}
          defaultValue={baseId}
          disabled={!choices.length}
        >
          {!listed && (
            <option value={baseId} disabled={!baseId}>
              {baseId || (runs.isPending ? "Loading the runs…" : "No other finished run on this environment")}
            </option>
          )}
          {choices.map((r) => (
            <option key={r.id} value={r.id}>
              {label(r)}
            </option>
          ))}
        </select>
      </div>
      <button type="submit" className="button" disabled={!choices.length}>
        Compare
      </button>
      {named && (
        <Link className="button button-quiet" to={{ search: "" }}>
          Previous run
        </Link>
      )}
    </form>
  );
}
