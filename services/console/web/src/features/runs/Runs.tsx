// A project's runs, newest first, a page at a time, filtered by status, plan and environment (in the
// URL, so links and the back button keep them). Editors and above start runs here.
import { useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type Run, RunStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { useState } from "react";
import { Link, useSearchParams } from "react-router";
import { isNotFound } from "../../api";
import { DataTable } from "../../components/DataTable";
import { SelectField } from "../../components/Inputs";
import { Pager, usePageToken } from "../../components/Pager";
import { Empty, NotFound, QueryView } from "../../components/States";
import { RunBar, RunStatusBadge } from "../../components/Status";
import { Time } from "../../components/Time";
import { count, duration, plural, runStatusFilters, skipReasonShort, skipReasonText } from "../../format";
import { useProject } from "../../project";
import { StartRunDialog } from "./StartRunDialog";

const statuses = runStatusFilters.map((f) => ({
  id: f.param,
  name: f.param.charAt(0).toUpperCase() + f.param.slice(1),
}));

export function Runs() {
  const { projectId, project, editor, name } = useProject();
  const [params, setParams] = useSearchParams();
  const pages = usePageToken();
  const [starting, setStarting] = useState(false);
  const status = runStatusFilters.find((f) => f.param === params.get("status"));
  const planId = params.get("plan") ?? "";
  const environmentId = params.get("environment") ?? "";
  const filtered = Boolean(status || planId || environmentId);

  const runs = useQuery(
    ConsoleService.method.listRuns,
    {
      projectId,
      statuses: status ? [status.status] : [],
      ...(planId && { testPlanId: planId }),
      ...(environmentId && { environmentId }),
      pageToken: pages.token,
    },
    { placeholderData: keepPreviousData },
  );
  const names = useRunNames(projectId);

  if (isNotFound(project.error) || isNotFound(runs.error)) return <NotFound what="Project" />;
  const filter = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    next.delete("page");
    setParams(next);
  };
  const filters = [
    { param: "status", label: "Status", any: "Any status", value: status?.param ?? "", choices: statuses },
    { param: "plan", label: "Test plan", any: "Any plan", value: planId, choices: names.plans },
    {
      param: "environment",
      label: "Environment",
      any: "Any environment",
      value: environmentId,
      choices: names.environments,
    },
  ];
  const startButton = editor && (
    <button type="button" className="button button-primary" onClick={() => setStarting(true)}>
      Start run
    </button>
  );

  return (
    <>
      <p className="eyebrow">{name}</p>
      <div className="page-head">
        <h1>Runs</h1>
        {startButton}
      </div>
      <p className="lead">
        Newest first. Pipelines start runs with an API key; Editors also start them here.
      </p>
      <search className="filters" aria-label="Filter runs">
        {filters.map(({ param, ...select }) => (
          <FilterSelect key={param} {...select} onChange={(value) => filter(param, value)} />
        ))}
        {filtered && (
          <Link className="button button-quiet filters-clear" to={{ search: "" }}>
            Clear filters
          </Link>
        )}
      </search>
      <QueryView
        query={runs}
        what="runs"
        isEmpty={(data) => data.runs.length === 0}
        empty={
          filtered || pages.later ? (
            <Empty title="No runs match these filters.">
              <Link to={{ search: "" }}>Show every run</Link>
            </Empty>
          ) : (
            <Empty title="No runs yet">
              <p>
                {editor
                  ? "Start one here, or from a pipeline with an API key (Settings: API & CI)."
                  : "Editors start runs here; pipelines start them with an API key."}
              </p>
              {startButton}
            </Empty>
          )
        }
      >
        {(data) => <RunTable runs={data.runs} names={names} />}
      </QueryView>
      <Pager label="Pages of runs" pages={pages} query={runs} />
      {editor && <StartRunDialog projectId={projectId} open={starting} onClose={() => setStarting(false)} />}
    </>
  );
}

/** A filter's select: "Any …", the choices, and the value in the URL when it is none of them. */
function FilterSelect({
  label,
  any,
  value,
  choices,
  onChange,
}: {
  label: string;
  any: string;
  value: string;
  choices: { id: string; name: string }[];
  onChange: (value: string) => void;
}) {
  return (
    <SelectField label={label} value={value} onChange={onChange}>
      <option value="">{any}</option>
      {choices.map((choice) => (
        <option key={choice.id} value={choice.id}>
          {choice.name}
        </option>
      ))}
      {value && !choices.some((choice) => choice.id === value) && <option value={value}>{value}</option>}
    </SelectField>
  );
}

/** The project's test plans and environments, to name them in a run table (none until read). */
export function useRunNames(projectId: string) {
  const plans = useQuery(ConsoleService.method.listTestPlans, { projectId });
  const environments = useQuery(ConsoleService.method.listEnvironments, { projectId });
  return { plans: plans.data?.testPlans ?? [], environments: environments.data?.environments ?? [] };
}

/** Runs as a table: status, name, plan, tests at a glance, environment, when, how long. */
export function RunTable({ runs, names }: { runs: Run[]; names: ReturnType<typeof useRunNames> }) {
  const { path } = useProject();
  const planName = (id: string) => names.plans.find((p) => p.id === id)?.name ?? id;
  const environmentName = (id: string) => names.environments.find((e) => e.id === id)?.name ?? id;
  return (
    <DataTable
      rows={runs}
      columns={[
        { label: "Status", cell: (run) => <RunStatusBadge status={run.status} /> },
        {
          label: "Run",
          cell: (run) => (
            <span className="cell-lines">
              <Link className="cell-strong" to={path(`/runs/${run.id}`)}>
                {run.name}
              </Link>
              {run.testPlanId && planName(run.testPlanId) !== run.name && (
                <span className="muted small">plan {planName(run.testPlanId)}</span>
              )}
            </span>
          ),
        },
        {
          label: "Tests",
          cell: (run) => (
            <span className="cell-bar">
              <RunBar run={run} />
              <span className="small">
                {count(run.passedTests)}/{count(run.totalTests)} passed
                {run.flakyTests > 0 && `, ${count(run.flakyTests)} on retry (flaky)`}
                {run.quarantinedFailures > 0 && `, ${plural(run.quarantinedFailures, "quarantined failure")}`}
              </span>
              {run.status === RunStatus.SKIPPED && skipReasonShort[run.skipReason] && (
                <span className="small muted" title={skipReasonText[run.skipReason]}>
                  Skipped: {skipReasonShort[run.skipReason]}
                </span>
              )}
            </span>
          ),
        },
        { label: "Environment", cell: (run) => environmentName(run.environmentId) },
        { label: "Started", cell: (run) => <Time at={run.startedAt ?? run.createdAt} /> },
        { label: "Duration", className: "cell-nowrap", cell: (run) => duration(run.durationMs) },
      ]}
    />
  );
}
