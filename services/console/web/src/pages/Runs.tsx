// A project's runs, newest first, a page at a time, filtered by status, plan and environment (in the
// URL, so links and the back button keep them). Editors and above start runs here.
import { useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import type { Environment, TestPlan } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import type { Run } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { useState } from "react";
import { Link, useSearchParams } from "react-router";
import { isNotFound } from "../api";
import { Pager, usePageToken } from "../components/Pager";
import { StartRunDialog } from "../components/StartRunDialog";
import { Empty, Failed, Loading, NotFound } from "../components/States";
import { RunBar, RunStatusBadge } from "../components/Status";
import { Time } from "../components/Time";
import { count, duration, runStatusFilters } from "../format";
import { useProject } from "../project";

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
  const plans = useQuery(ConsoleService.method.listTestPlans, { projectId });
  const environments = useQuery(ConsoleService.method.listEnvironments, { projectId });

  if (isNotFound(project.error) || isNotFound(runs.error)) return <NotFound what="Project" />;
  const filter = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    next.delete("page");
    setParams(next);
  };
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
        <label className="field">
          <span>Status</span>
          <select
            className="input"
            value={status?.param ?? ""}
            onChange={(e) => filter("status", e.target.value)}
          >
            <option value="">Any status</option>
            {runStatusFilters.map((f) => (
              <option key={f.param} value={f.param}>
                {f.param.charAt(0).toUpperCase() + f.param.slice(1)}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Test plan</span>
          <select className="input" value={planId} onChange={(e) => filter("plan", e.target.value)}>
            <option value="">Any plan</option>
            {plans.data?.testPlans.map((plan) => (
              <option key={plan.id} value={plan.id}>
                {plan.name}
              </option>
            ))}
            {planId && !plans.data?.testPlans.some((p) => p.id === planId) && (
              <option value={planId}>{planId}</option>
            )}
          </select>
        </label>
        <label className="field">
          <span>Environment</span>
          <select
            className="input"
            value={environmentId}
            onChange={(e) => filter("environment", e.target.value)}
          >
            <option value="">Any environment</option>
            {environments.data?.environments.map((env) => (
              <option key={env.id} value={env.id}>
                {env.name}
              </option>
            ))}
            {environmentId && !environments.data?.environments.some((e) => e.id === environmentId) && (
              <option value={environmentId}>{environmentId}</option>
            )}
          </select>
        </label>
        {filtered && (
          <Link className="button button-quiet filters-clear" to={{ search: "" }}>
            Clear filters
          </Link>
        )}
      </search>
      {runs.isPending && <Loading what="runs" />}
      {runs.error && <Failed error={runs.error} retry={() => void runs.refetch()} />}
      {runs.data?.runs.length === 0 &&
        (filtered || pages.later ? (
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
        ))}
      {runs.data && runs.data.runs.length > 0 && (
        <RunTable
          runs={runs.data.runs}
          plans={plans.data?.testPlans ?? []}
          environments={environments.data?.environments ?? []}
        />
      )}
      <Pager
        label="Pages of runs"
        pages={pages}
        nextPageToken={runs.data?.nextPageToken}
        busy={runs.isFetching}
      />
      {editor && <StartRunDialog projectId={projectId} open={starting} onClose={() => setStarting(false)} />}
    </>
  );
}

/** Runs as a table: status, name, plan, tests at a glance, environment, when, how long. */
export function RunTable({
  runs,
  plans,
  environments,
}: {
  runs: Run[];
  plans: TestPlan[];
  environments: Environment[];
}) {
  const { path } = useProject();
  const planName = (id: string | undefined) => (id ? (plans.find((p) => p.id === id)?.name ?? id) : "");
  const environmentName = (id: string) => environments.find((e) => e.id === id)?.name ?? id;
  return (
    <div className="table-scroll">
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Status</th>
            <th scope="col">Run</th>
            <th scope="col">Tests</th>
            <th scope="col">Environment</th>
            <th scope="col">Started</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <tr key={run.id}>
              <td data-label="Status">
                <RunStatusBadge status={run.status} />
              </td>
              <td data-label="Run">
                <span className="cell-lines">
                  <Link className="cell-strong" to={path(`/runs/${run.id}`)}>
                    {run.name}
                  </Link>
                  {run.testPlanId && planName(run.testPlanId) !== run.name && (
                    <span className="muted small">plan {planName(run.testPlanId)}</span>
                  )}
                </span>
              </td>
              <td data-label="Tests">
                <span className="cell-bar">
                  <RunBar run={run} />
                  <span className="small">
                    {count(run.passedTests)}/{count(run.totalTests)} passed
                  </span>
                </span>
              </td>
              <td data-label="Environment">{environmentName(run.environmentId)}</td>
              <td data-label="Started">
                <Time at={run.startedAt ?? run.createdAt} />
              </td>
              <td data-label="Duration" className="cell-nowrap">
                {duration(run.durationMs)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
