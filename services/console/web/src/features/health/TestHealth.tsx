// A project's test health (docs/console.md, "Test health"): its test cases by state and impact
// (quarantined, failing, new failure, flaky, unknown, stable), with their failure rate and its 95%
// Wilson interval, flip rate, failing since or last failed and a strip of their latest outcomes.
// Filters (environment, state, plan, tag) are in the URL; pages are read with ListTestHealth's cursor.
import { useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import type { CaseHealth, HealthState } from "@testrun/gen/testrun/runs/v1/health_pb";
import { Link, useSearchParams } from "react-router";
import { isNotFound } from "../../api";
import { DataTable } from "../../components/DataTable";
import { SelectField } from "../../components/Inputs";
import { Pager, usePageToken } from "../../components/Pager";
import { Empty, Failed, Loading, NotFound, QueryView } from "../../components/States";
import { Badge } from "../../components/Status";
import { Time } from "../../components/Time";
import { count } from "../../format";
import { useProject } from "../../project";
import { useRunNames } from "../runs/Runs";
import { healthStateName, healthStateTone, rateText, statesByImpact } from "./health-format";
import { OutcomeStrip } from "./OutcomeStrip";
import { useScopedCaseIds } from "./scope";

const stateParam = (state: HealthState) => healthStateName[state].toLowerCase().replace(" ", "-");

export function TestHealth() {
  const { projectId, project, name } = useProject();
  const [params, setParams] = useSearchParams();
  const pages = usePageToken();
  const environmentId = params.get("environment") ?? "";
  const planId = params.get("plan") ?? "";
  const tag = params.get("tag") ?? "";
  const state = statesByImpact.find((s) => stateParam(s) === params.get("state"));
  const names = useRunNames(projectId);
  const scope = useScopedCaseIds(projectId, planId, tag);
  const health = useQuery(
    ConsoleService.method.listTestHealth,
    {
      projectId,
      ...(environmentId && { environmentId }),
      states: state ? [state] : [],
      testCaseIds: scope.ids ?? [],
      cursor: pages.token,
    },
    {
      placeholderData: keepPreviousData,
      enabled: scope.ids !== undefined && !(scope.scoped && !scope.ids?.length),
    },
  );
  if (isNotFound(project.error) || isNotFound(health.error)) return <NotFound what="Project" />;
  const filter = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    next.delete("page");
    setParams(next);
  };
  const environmentName = (id: string) => names.environments.find((e) => e.id === id)?.name ?? id;
  const filtered = Boolean(environmentId || planId || tag || state);

  return (
    <>
      <p className="eyebrow">{name}</p>
      <h1>Test health</h1>
      <p className="lead">
        Each test case's state per environment, from its latest results: the most pressing first. Rates show
        their 95% interval; a case with few results says so.
      </p>
      <search className="filters" aria-label="Filter test health">
        <SelectField label="Environment" value={environmentId} onChange={(v) => filter("environment", v)}>
          <option value="">Every environment</option>
          {names.environments.map((e) => (
            <option key={e.id} value={e.id}>
              {e.name}
            </option>
          ))}
        </SelectField>
        <SelectField
          label="State"
          value={state ? stateParam(state) : ""}
          onChange={(v) => filter("state", v)}
        >
          <option value="">Any state</option>
          {statesByImpact.map((s) => (
            <option key={s} value={stateParam(s)}>
              {healthStateName[s]}
            </option>
          ))}
        </SelectField>
        <SelectField label="Test plan" value={planId} onChange={(v) => filter("plan", v)}>
          <option value="">Any plan</option>
          {names.plans.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </SelectField>
        <form
          className="field"
          onSubmit={(e) => {
            e.preventDefault();
            filter("tag", String(new FormData(e.currentTarget).get("tag") ?? "").trim());
          }}
        >
          <label htmlFor="health-tag">Tag</label>
          <input
            id="health-tag"
            name="tag"
            className="input"
            defaultValue={tag}
            key={tag}
            placeholder="Any tag"
          />
        </form>
        {filtered && (
          <Link className="button button-quiet filters-clear" to={{ search: "" }}>
            Clear filters
          </Link>
        )}
      </search>
      {health.data && <StateCounts counts={health.data.counts} />}
      {scope.error ? (
        <Failed error={scope.error} />
      ) : scope.scoped && scope.ids?.length === 0 ? (
        <Empty title="No test cases in this plan or with this tag." />
      ) : scope.ids === undefined ? (
        <Loading what="the test cases" />
      ) : (
        <QueryView
          query={health}
          what="test health"
          isEmpty={(data) => data.cases.length === 0}
          empty={
            filtered || pages.later ? (
              <Empty title="No test cases match these filters.">
                <Link to={{ search: "" }}>Show every test case</Link>
              </Empty>
            ) : (
              <Empty title="No results yet">
                <p>A test case's health shows once its runs have finished.</p>
              </Empty>
            )
          }
        >
          {(data) => <HealthTable cases={data.cases} environmentName={environmentName} />}
        </QueryView>
      )}
      <Pager
        label="Pages of test health"
        pages={pages}
        query={{
          data: health.data && { nextPageToken: health.data.nextCursor },
          isFetching: health.isFetching,
        }}
      />
    </>
  );
}

function StateCounts({ counts }: { counts: { [state: number]: number } }) {
  return (
    <ul className="health-counts" aria-label="Test cases per state">
      {statesByImpact.map((s) => (
        <li key={s}>
          <Badge tone={healthStateTone[s]}>{healthStateName[s]}</Badge> {count(counts[s] ?? 0)}
        </li>
      ))}
    </ul>
  );
}

function HealthTable({
  cases,
  environmentName,
}: {
  cases: CaseHealth[];
  environmentName: (id: string) => string;
}) {
  const { path } = useProject();
  return (
    <DataTable
      rows={cases.map((c) => ({ ...c, id: `${c.testCaseId}/${c.environmentId}` }))}
      columns={[
        {
          label: "State",
          className: "cell-nowrap",
          cell: (c) => <Badge tone={healthStateTone[c.state]}>{healthStateName[c.state]}</Badge>,
        },
        {
          label: "Test case",
          className: "cell-strong",
          cell: (c) => <Link to={path(`/test-cases/${c.testCaseId}`)}>{c.name || c.testCaseId}</Link>,
        },
        { label: "Environment", cell: (c) => environmentName(c.environmentId) },
        {
          label: "Failure rate",
          cell: (c) =>
            c.enoughResults ? (
              rateText(c.failureRate, "failed")
            ) : (
              <span className="muted">not enough results ({count(c.sampleSize)})</span>
            ),
        },
        {
          label: "Flip rate",
          cell: (c) => (c.enoughResults ? rateText(c.flipRate, "flipped") : <span className="muted">—</span>),
        },
        {
          label: "Failing since / last failed",
          className: "cell-nowrap",
          cell: (c) =>
            c.failingSince ? (
              <span>
                since <Time at={c.failingSince.at} />
              </span>
            ) : c.lastFailure ? (
              <span>
                last <Time at={c.lastFailure.at} />
              </span>
            ) : (
              <span className="muted">never failed</span>
            ),
        },
        { label: "Latest results", cell: (c) => <OutcomeStrip outcomes={c.outcomes} /> },
      ]}
    />
  );
}
