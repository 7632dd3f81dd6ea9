// One failure group (docs/console.md, "Failures"): how its failures failed, where it was first seen
// (the run, the test case and its version, the environment), its test cases (still failing or
// passing again) and its occurrences, newest first, read a page at a time with GetFailureGroup's
// cursor (the page's token is in the URL).
import { useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import type { FailureGroup, FailureGroupCase, FailureOccurrence } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { Link, useParams } from "react-router";
import { isNotFound } from "../../api";
import { DataTable } from "../../components/DataTable";
import { Fact, Facts } from "../../components/Facts";
import { Pager, usePageToken } from "../../components/Pager";
import { Failed, NotFound, QueryView } from "../../components/States";
import { Badge } from "../../components/Status";
import { Time } from "../../components/Time";
import { count } from "../../format";
import { useProject } from "../../project";
import { Cause } from "../runs/Attempts";
import { useRunNames } from "../runs/Runs";
import { seenText, stepText } from "./failure-format";
import { GroupStateBadge, Seen } from "./parts";

export function FailureGroupPage() {
  const { groupId = "" } = useParams();
  const { projectId, project, path } = useProject();
  const pages = usePageToken();
  const found = useQuery(
    ConsoleService.method.getFailureGroup,
    { projectId, failureGroupId: groupId, cursor: pages.token },
    { placeholderData: keepPreviousData },
  );
  if (isNotFound(project.error) || isNotFound(found.error)) return <NotFound what="Failure group" />;
  if (!found.data) return <QueryView query={found} what="the failure group" />;
  const { group, cases, occurrences, nextCursor } = found.data;
  if (!group) return <NotFound what="Failure group" />;

  return (
    <>
      <p className="eyebrow">
        <Link to={path("/failures")}>Failures</Link>
      </p>
      <div className="page-head">
        <h1 className="title-with-badge failure-title">
          <span>{group.message || "(no message)"}</span> <GroupStateBadge state={group.state} />
        </h1>
      </div>
      {found.error ? <Failed error={found.error} retry={() => void found.refetch()} /> : null}
      <GroupFacts group={group} />
      <section aria-labelledby="cases-heading" className="section">
        <h2 id="cases-heading">Test cases ({count(group.casesAffected)})</h2>
        <p className="muted small">
          The most occurrences first. A case passing again no longer keeps the group open.
        </p>
        <CaseTable cases={cases} />
      </section>
      <section aria-labelledby="occurrences-heading" className="section">
        <h2 id="occurrences-heading">Occurrences ({count(group.occurrences)})</h2>
        <p className="muted small">Each failed attempt in the group, newest first.</p>
        <OccurrenceTable occurrences={occurrences} />
        <Pager
          label="Pages of occurrences"
          pages={pages}
          query={{ data: { nextPageToken: nextCursor }, isFetching: found.isFetching }}
        />
      </section>
    </>
  );
}

function GroupFacts({ group }: { group: FailureGroup }) {
  const { projectId, path } = useProject();
  const names = useRunNames(projectId);
  const first = group.firstSeen;
  const environmentName = (id: string) => names.environments.find((e) => e.id === id)?.name ?? id;
  return (
    <section className="panel" aria-label="About this failure">
      <Facts>
        <Fact term="Step">
          <code className="failure-step">{stepText(group)}</code>
        </Fact>
        <Fact term="Cause">
          <Cause cause={group.cause} />
        </Fact>
        <Fact term="Seen">{seenText(group.occurrences, group.casesAffected)}</Fact>
        <Fact term="Last seen">
          <Seen occurrence={group.lastSeen} />
        </Fact>
        {group.resolvedAt && (
          <Fact term="Resolved">
            <Time at={group.resolvedAt} />
          </Fact>
        )}
      </Facts>
      {first && (
        <p className="first-seen">
          <strong>First seen</strong> <Time at={first.at} /> in run{" "}
          <Link className="id-link" to={path(`/runs/${first.runId}`)}>
            {first.runId}
          </Link>
          , test{" "}
          <Link to={path(`/runs/${first.runId}/tests/${first.testResultId}`)}>{first.testCaseName}</Link>{" "}
          (case{" "}
          <Link to={path(`/test-cases/${first.testCaseId}?version=${first.caseVersion}`)}>
            version {first.caseVersion}
          </Link>
          ) on <Link to={path("/environments")}>{environmentName(first.environmentId)}</Link>.
        </p>
      )}
    </section>
  );
}

function CaseTable({ cases }: { cases: FailureGroupCase[] }) {
  const { path } = useProject();
  return (
    <DataTable
      rows={cases.map((c) => ({ ...c, id: c.testCaseId }))}
      columns={[
        {
          label: "Test case",
          className: "cell-strong",
          cell: (c) => <Link to={path(`/test-cases/${c.testCaseId}`)}>{c.name || c.testCaseId}</Link>,
        },
        { label: "Occurrences", number: true, cell: (c) => count(c.occurrences) },
        { label: "Last seen", className: "cell-nowrap", cell: (c) => <Time at={c.lastSeenAt} /> },
        {
          label: "Now",
          className: "cell-nowrap",
          cell: (c) =>
            c.open ? <Badge tone="bad">Still failing</Badge> : <Badge tone="good">Passing again</Badge>,
        },
      ]}
    />
  );
}

function OccurrenceTable({ occurrences }: { occurrences: FailureOccurrence[] }) {
  const { path } = useProject();
  return (
    <DataTable
      rows={occurrences.map((o) => ({ ...o, id: `${o.testResultId}/${o.attempt}` }))}
      columns={[
        { label: "When", className: "cell-nowrap", cell: (o) => <Time at={o.at} /> },
        {
          label: "Run",
          cell: (o) => (
            <Link className="id-link" to={path(`/runs/${o.runId}`)}>
              {o.runId}
            </Link>
          ),
        },
        {
          label: "Test",
          className: "cell-strong",
          cell: (o) => (
            <Link to={path(`/runs/${o.runId}/tests/${o.testResultId}`)}>
              {o.testCaseName || o.testCaseId}
            </Link>
          ),
        },
        { label: "Attempt", number: true, cell: (o) => count(o.attempt) },
        {
          label: "Case version",
          number: true,
          cell: (o) => (
            <Link to={path(`/test-cases/${o.testCaseId}?version=${o.caseVersion}`)}>
              {count(o.caseVersion)}
            </Link>
          ),
        },
        {
          label: "Summary",
          className: "cell-summary",
          cell: (o) => o.summary || <span className="muted">—</span>,
        },
      ]}
    />
  );
}
