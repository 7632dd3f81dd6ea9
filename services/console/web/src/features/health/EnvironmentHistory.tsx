// A test case's health in one environment: its state, its latest 50 results as a strip (each a link
// to its test page), pass rate, median and p90 duration with the trend, and "failing since run X
// (case version N, 3 days ago)" or "last failed …".
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import type { CaseHealth, ResultRef } from "@testrun/gen/testrun/runs/v1/health_pb";
import { type HistoryEntry, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { Link } from "react-router";
import { Fact, Facts } from "../../components/Facts";
import { QueryView } from "../../components/States";
import { Badge } from "../../components/Status";
import { Time } from "../../components/Time";
import { count, duration, testStatusName } from "../../format";
import { useProject } from "../../project";
import { healthStateName, healthStateTone, rateText } from "./health-format";

const stripLength = 50;

export function EnvironmentHistory({
  health,
  environmentName,
}: {
  health: CaseHealth;
  environmentName: string;
}) {
  const { projectId } = useProject();
  const history = useQuery(ConsoleService.method.getTestCaseHistory, {
    projectId,
    testCaseId: health.testCaseId,
    environmentId: health.environmentId,
    limit: stripLength,
  });
  const passed = health.failureRate ? health.failureRate.sample - health.failureRate.count : 0;
  const trend = durationTrend(health);
  return (
    <div className="panel health-environment">
      <h3 className="title-with-badge">
        <span>{environmentName}</span>{" "}
        <Badge tone={healthStateTone[health.state]}>{healthStateName[health.state]}</Badge>
      </h3>
      <QueryView query={history} what="the results" isEmpty={(data) => data.entries.length === 0}>
        {(data) => <ResultStrip entries={data.entries} />}
      </QueryView>
      <Facts>
        <Fact term="Pass rate">
          {health.enoughResults && health.failureRate
            ? `${count(passed)} of ${count(health.failureRate.sample)} passed`
            : `not enough results (${count(health.sampleSize)})`}
        </Fact>
        <Fact term="Failure rate">{rateText(health.failureRate, "failed")}</Fact>
        <Fact term="Duration">
          median {duration(health.medianDurationMs)}, p90 {duration(health.p90DurationMs)}
          {trend && <span className="muted"> ({trend})</span>}
        </Fact>
        <Fact term="Failures">
          <FailureAge health={health} />
        </Fact>
      </Facts>
    </div>
  );
}

/** "slower than before (1.2 s)", from the window's older half's median; nothing with too few. */
function durationTrend(health: CaseHealth): string {
  const now = Number(health.medianDurationMs);
  const before = Number(health.previousMedianDurationMs);
  if (!now || !before) return "";
  const change = (now - before) / before;
  if (Math.abs(change) < 0.1) return `steady, was ${duration(before)}`;
  return `${change > 0 ? "slower" : "faster"} than before: ${duration(before)}`;
}

function FailureAge({ health }: { health: CaseHealth }) {
  const { path } = useProject();
  const at = (ref: ResultRef) => (
    <>
      run <Link to={path(`/runs/${ref.runId}`)}>{ref.runId}</Link> (case version {ref.caseVersion},{" "}
      <Time at={ref.at} />)
    </>
  );
  if (health.failingSince) return <>Failing since {at(health.failingSince)}</>;
  if (health.lastFailure) return <>Last failed in {at(health.lastFailure)}</>;
  return <span className="muted">Never failed</span>;
}

const outcomeOf = (entry: HistoryEntry) =>
  entry.status === TestStatus.FAILED
    ? "f"
    : entry.flaky
      ? "r"
      : entry.status === TestStatus.PASSED
        ? "p"
        : "s";

function ResultStrip({ entries }: { entries: HistoryEntry[] }) {
  const { path } = useProject();
  return (
    <nav
      className="outcome-strip outcome-strip-links"
      aria-label={`Latest ${entries.length} results, newest first`}
    >
      {entries.map((entry) => {
        const label = `${entry.flaky ? "Passed on retry" : testStatusName[entry.status]} in ${entry.runName || entry.runId}, case version ${entry.caseVersion}`;
        return (
          <Link
            key={entry.testResultId}
            to={path(`/runs/${entry.runId}/tests/${entry.testResultId}`)}
            className={`outcome outcome-${outcomeOf(entry)}`}
            aria-label={label}
            title={label}
          />
        );
      })}
    </nav>
  );
}
