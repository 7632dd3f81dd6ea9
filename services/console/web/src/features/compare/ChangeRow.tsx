// One test case of a comparison: its change, its status in the base and now, links to its result in
// each run and to its failure group, the cause, "since run Z" for a failure that goes on, and the
// case's version in each run with the steps that differ.
import { TestChange, type TestComparison, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { Link } from "react-router";
import { Badge } from "../../components/Status";
import { type Tone, testStatusName } from "../../format";
import { useProject } from "../../project";
import { causeName } from "../runs/Attempts";
import { changeName } from "./compare-format";
import { StepDiff } from "./StepDiff";

/** A change's badge colour; also its count's in the toggles. */
export const changeTone: Record<TestChange, Tone> = {
  [TestChange.UNSPECIFIED]: "neutral",
  [TestChange.NEWLY_FAILING]: "bad",
  [TestChange.FIXED]: "good",
  [TestChange.FLAKY]: "waiting",
  [TestChange.STILL_FAILING]: "bad",
  [TestChange.NEW_TEST]: "active",
  [TestChange.REMOVED_TEST]: "neutral",
  [TestChange.UNCHANGED]: "neutral",
};

const statusWord = (status: TestStatus) => testStatusName[status].toLowerCase();

/** "passed in the base, failed now"; "not in the base, failed now"; "passed in the base, not run now". */
function statusesText(test: TestComparison): string {
  const then =
    test.baseStatus === TestStatus.UNSPECIFIED
      ? "not in the base"
      : `${statusWord(test.baseStatus)} in the base`;
  const now = test.status === TestStatus.UNSPECIFIED ? "not in this run" : `${statusWord(test.status)} now`;
  return `${then.charAt(0).toUpperCase()}${then.slice(1)}, ${now}`;
}

export function ChangeRow({ test, runId, baseId }: { test: TestComparison; runId: string; baseId: string }) {
  const { path } = useProject();
  const change = test.change || TestChange.UNCHANGED;
  const versionChanged =
    test.caseVersion && test.baseCaseVersion && test.caseVersion !== test.baseCaseVersion;
  const links = [
    test.testResultId && (
      <Link key="run" to={path(`/runs/${runId}/tests/${test.testResultId}`)}>
        Result in this run
      </Link>
    ),
    test.baseTestResultId && (
      <Link key="base" to={path(`/runs/${baseId}/tests/${test.baseTestResultId}`)}>
        Result in the base run
      </Link>
    ),
    test.failureGroupId && (
      <Link key="group" to={path(`/failures/${test.failureGroupId}`)}>
        Failure group
      </Link>
    ),
  ].filter(Boolean);
  return (
    <li className="compare-test">
      <p className="compare-test-head">
        <Badge tone={changeTone[change]}>{changeName[change]}</Badge>{" "}
        <Link className="cell-strong" to={path(`/test-cases/${test.testCaseId}`)}>
          {test.name || test.testCaseId}
        </Link>
      </p>
      <p className="small">
        {statusesText(test)}
        {test.cause ? <span className="muted"> ({causeName[test.cause]})</span> : null}
        {test.failingSinceRunId && (
          <>
            {" "}
            · failing since run{" "}
            <Link to={path(`/runs/${test.failingSinceRunId}`)}>{test.failingSinceRunId}</Link>
          </>
        )}
      </p>
      {links.length > 0 && <p className="compare-links small">{links}</p>}
      {versionChanged ? (
        <p className="small">
          Test case version {test.baseCaseVersion} → {test.caseVersion}
          {test.stepChanges.length === 0 && <span className="muted">: the same steps</span>}
        </p>
      ) : test.stepChanges.length > 0 ? (
        <p className="small">Its steps differ between the two runs</p>
      ) : null}
      <StepDiff changes={test.stepChanges} />
    </li>
  );
}
