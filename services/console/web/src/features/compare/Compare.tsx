// A run compared with its base (docs/console.md, "Compare"), at the run's url + `/compare`, the link
// the CLI, the MCP tools and the REST API give: the previous finished run on the same environment
// with the same plan (or name), or the run named by `?base=`. What changed around the tests first
// (base URL, variables' names, the plan's cases), then the tests by change, the differences first
// and the unchanged behind a toggle; `?change=` keeps one change only.
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type Run, TestChange, type TestComparison } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { useState } from "react";
import { Link, useParams, useSearchParams } from "react-router";
import { isNotFound } from "../../api";
import { Empty, Failed, Loading, NotFound } from "../../components/States";
import { RunStatusBadge } from "../../components/Status";
import { Time } from "../../components/Time";
import { count, plural } from "../../format";
import { useProject } from "../../project";
import { AroundTheTests } from "./AroundTheTests";
import { BasePicker } from "./BasePicker";
import { ChangeRow, changeTone } from "./ChangeRow";
import { baseRuleText, changeName, changeOfParam, changeParam, changesInOrder } from "./compare-format";

export function Compare() {
  const { runId = "" } = useParams();
  const { projectId, project, path } = useProject();
  const [params, setParams] = useSearchParams();
  const baseParam = params.get("base") ?? "";
  const only = changeOfParam(params.get("change"));
  // The environment's name for the header; its id only when it cannot be read.
  const environments = useQuery(ConsoleService.method.listEnvironments, { projectId });
  const compared = useQuery(ConsoleService.method.compareRuns, {
    projectId,
    runId,
    ...(baseParam && { baseRunId: baseParam }),
  });

  if (isNotFound(project.error)) return <NotFound what="Project" />;
  if (isNotFound(compared.error) && !baseParam) return <NotFound what="Run" />;
  const set = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    setParams(next);
  };
  const head = (
    <>
      <p className="eyebrow">
        <Link to={path("/runs")}>Runs</Link> /{" "}
        <Link className="id-link" to={path(`/runs/${runId}`)}>
          {runId}
        </Link>
      </p>
      <h1>Compare</h1>
    </>
  );
  if (isNotFound(compared.error))
    return (
      <>
        {head}
        <div className="state state-error" role="alert">
          <p>
            There is no run <code>{baseParam}</code> in this project to compare with.
          </p>
          <p className="compare-links">
            <Link to={{ search: "" }}>Compare with the previous run</Link>
            <Link to={path(`/runs/${runId}`)}>Back to the run</Link>
          </p>
        </div>
      </>
    );
  const comparison = compared.data?.comparison;
  if (!comparison?.run || environments.isPending)
    return (
      <>
        {head}
        {compared.error ? (
          <Failed error={compared.error} retry={() => void compared.refetch()} />
        ) : (
          <Loading what="the comparison" />
        )}
      </>
    );
  const { run, base } = comparison;
  const environment =
    environments.data?.environments.find((e) => e.id === run.environmentId)?.name ?? run.environmentId;
  const rule = baseRuleText(comparison.baseRule, environment, Boolean(run.testPlanId));
  const runPath = (id: string) => path(`/runs/${id}`);

  return (
    <>
      {head}
      {base ? (
        <p className="compare-summary">
          Run <Link to={runPath(run.id)}>{run.id}</Link> compared with run{" "}
          <Link to={runPath(base.id)}>{base.id}</Link> ({rule}).
        </p>
      ) : (
        <p className="compare-summary">
          Run <Link to={runPath(run.id)}>{run.id}</Link>: no base run to compare with.
        </p>
      )}
      <div className="compare-runs">
        <RunCard title="This run" run={run} />
        {base && <RunCard title="Base run" run={base} />}
      </div>
      {!run.finished && (
        <p className="notice notice-info">
          This run has not finished: its tests are compared as they are now.
        </p>
      )}
      <BasePicker
        projectId={projectId}
        run={run}
        baseId={base?.id ?? baseParam}
        named={Boolean(baseParam)}
        onChoose={(id) => setParams(new URLSearchParams({ base: id }))}
      />
      {!base ? (
        <Empty title="No base run to compare with">
          <p>
            No earlier finished run on {environment} with the same {run.testPlanId ? "plan" : "name"}: every
            failure of this run is new to it. Choose a run above to compare with it.
          </p>
        </Empty>
      ) : (
        <>
          <AroundTheTests comparison={comparison} />
          <ChangeChips counts={comparison.counts} only={only} onChange={(c) => set("change", c)} />
          <TestsByChange tests={comparison.tests} only={only} runId={run.id} baseId={base.id} />
        </>
      )}
    </>
  );
}

/** One of the two runs: its name, status, when it started and its counts. */
function RunCard({ title, run }: { title: string; run: Run }) {
  const { path } = useProject();
  return (
    <section className="panel compare-run" aria-label={title}>
      <p className="eyebrow">{title}</p>
      <p className="compare-run-name">
        <Link to={path(`/runs/${run.id}`)}>{run.name}</Link> <RunStatusBadge status={run.status} />
      </p>
      <p className="small muted">
        <code>{run.id}</code> · <Time at={run.startedAt ?? run.createdAt} /> · {count(run.passedTests)}/
        {count(run.totalTests)} passed
      </p>
    </section>
  );
}

/** The counts per change as toggle buttons: pressing one shows only its tests (again: all). */
function ChangeChips({
  counts,
  only,
  onChange,
}: {
  counts: { [change: number]: number };
  only: TestChange | undefined;
  onChange: (param: string) => void;
}) {
  return (
    <fieldset className="compare-chips">
      <legend className="visually-hidden">Tests per change</legend>
      {changesInOrder.map((change) => {
        const n = counts[change] ?? 0;
        const pressed = only === change;
        return (
          <button
            key={change}
            type="button"
            className={`compare-chip compare-chip-${changeTone[change]}`}
            aria-pressed={pressed}
            disabled={n === 0 && !pressed}
            onClick={() => onChange(pressed ? "" : changeParam(change))}
          >
            {changeName[change]} <span className="compare-chip-count">{count(n)}</span>
          </button>
        );
      })}
    </fieldset>
  );
}

/** The differences by change, in CompareRuns' order; the unchanged tests behind a toggle. */
function TestsByChange({
  tests,
  only,
  runId,
  baseId,
}: {
  tests: readonly TestComparison[];
  only: TestChange | undefined;
  runId: string;
  baseId: string;
}) {
  const [showUnchanged, setShowUnchanged] = useState(false);
  const of = (change: TestChange) => tests.filter((t) => (t.change || TestChange.UNCHANGED) === change);
  const differences = changesInOrder.filter((c) => c !== TestChange.UNCHANGED && (!only || only === c));
  const unchanged = of(TestChange.UNCHANGED);
  const listed = differences.filter((c) => of(c).length > 0);
  const group = (change: TestChange) => (
    <section key={change} className="section compare-group" aria-labelledby={`change-${changeParam(change)}`}>
      <h3 id={`change-${changeParam(change)}`}>
        {changeName[change]} ({count(of(change).length)})
      </h3>
      <ol className="compare-tests">
        {of(change).map((test) => (
          <ChangeRow key={test.testCaseId} test={test} runId={runId} baseId={baseId} />
        ))}
      </ol>
    </section>
  );
  return (
    <section className="section" aria-labelledby="compare-tests-heading">
      <h2 id="compare-tests-heading">Tests</h2>
      {only === TestChange.UNCHANGED ? null : listed.length ? (
        listed.map(group)
      ) : (
        <p className="muted">
          {only ? `No test is ${changeName[only].toLowerCase()}.` : "No test changed against the base run."}
        </p>
      )}
      {only === TestChange.UNCHANGED
        ? group(TestChange.UNCHANGED)
        : !only &&
          unchanged.length > 0 && (
            <>
              <button
                type="button"
                className="link-button compare-toggle"
                aria-expanded={showUnchanged}
                aria-controls="compare-unchanged"
                onClick={() => setShowUnchanged((shown) => !shown)}
              >
                {showUnchanged ? "Hide" : "Show"} {plural(unchanged.length, "unchanged test")}
              </button>
              <div id="compare-unchanged" hidden={!showUnchanged}>
                {showUnchanged && group(TestChange.UNCHANGED)}
              </div>
            </>
          )}
    </section>
  );
}
