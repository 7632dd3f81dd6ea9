// A project's test cases (filtered by tag and by a search in their names, both in the URL), and one
// test case with its tags, state, plans and steps: the current version, or with `?version=N` one of
// its kept versions, read-only, under a banner saying so (a run's test links there).
import { useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import type { TestCase as TestCaseMessage } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useDeferredValue } from "react";
import { Link, useParams, useSearchParams } from "react-router";
import { isNotFound, messageOf } from "../api";
import { DataTable } from "../components/DataTable";
import { Fact, Facts } from "../components/Facts";
import { Empty, NotFound, QueryView } from "../components/States";
import { Badge } from "../components/Status";
import { StepList } from "../components/Steps";
import { Time } from "../components/Time";
import { changedByName, VersionLine } from "../components/Version";
import { absoluteTime, dateOf, plural } from "../format";
import { useProject } from "../project";

export function TestCases() {
  const { projectId, project, name } = useProject();
  const [params, setParams] = useSearchParams();
  const tag = params.get("tag") ?? "";
  const search = params.get("q") ?? "";
  const searched = useDeferredValue(search.trim());
  const cases = useQuery(
    ConsoleService.method.listTestCases,
    { projectId, tags: tag ? [tag] : [], search: searched },
    { placeholderData: keepPreviousData },
  );
  // Every case, for the tags to filter by.
  const all = useQuery(ConsoleService.method.listTestCases, { projectId });
  if (isNotFound(project.error) || isNotFound(cases.error)) return <NotFound what="Project" />;
  const tags = [
    ...new Map(
      (all.data?.testCases ?? []).flatMap((c) => c.tags).map((t) => [t.toLowerCase(), t] as const),
    ).values(),
  ].sort((a, b) => a.localeCompare(b));
  const set = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    setParams(next, { replace: key === "q" });
  };

  return (
    <>
      <p className="eyebrow">{name}</p>
      <h1>Test cases</h1>
      <p className="lead">
        Named steps run against an environment. Plans and tags select which ones a run executes.
      </p>
      <search className="filters" aria-label="Filter test cases">
        <label className="field filters-grow">
          <span>Search</span>
          <input
            className="input"
            type="search"
            placeholder="Name contains…"
            value={search}
            onChange={(e) => set("q", e.target.value)}
          />
        </label>
        <label className="field">
          <span>Tag</span>
          <select className="input" value={tag} onChange={(e) => set("tag", e.target.value)}>
            <option value="">Any tag</option>
            {tags.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
            {tag && !tags.some((t) => t.toLowerCase() === tag.toLowerCase()) && (
              <option value={tag}>{tag}</option>
            )}
          </select>
        </label>
      </search>
      <QueryView
        query={cases}
        what="test cases"
        isEmpty={(data) => data.testCases.length === 0}
        empty={
          tag || searched ? (
            <Empty title="No test case matches.">
              <Link to={{ search: "" }}>Show every test case</Link>
            </Empty>
          ) : (
            <Empty title="No test cases yet.">
              <p>
                An operator adds them from a file with <code>testrunctl case create</code>.
              </p>
            </Empty>
          )
        }
      >
        {(data) => <CaseTable testCases={data.testCases} />}
      </QueryView>
      {cases.data?.truncated && (
        <p className="muted small">
          Only the first 500 matches are listed: search or filter to narrow them down.
        </p>
      )}
    </>
  );
}

/** Test cases as a table (the list, a plan's cases in order). */
export function CaseTable({
  testCases,
  numbered = false,
}: {
  testCases: TestCaseMessage[];
  numbered?: boolean;
}) {
  const { path } = useProject();
  return (
    <DataTable
      rows={testCases}
      columns={[
        numbered && { label: "#", cell: (_, i) => i + 1 },
        {
          label: "Name",
          className: "cell-strong",
          cell: (testCase) => <Link to={path(`/test-cases/${testCase.id}`)}>{testCase.name}</Link>,
        },
        { label: "Tags", cell: (testCase) => <Tags tags={testCase.tags} /> },
        { label: "State", cell: (testCase) => <EnabledBadge enabled={testCase.enabled} /> },
        { label: "Changed", cell: (testCase) => <Time at={testCase.updatedAt ?? testCase.createdAt} /> },
      ]}
    />
  );
}

function Tags({ tags }: { tags: string[] }) {
  const { path } = useProject();
  if (tags.length === 0) return <span className="muted">—</span>;
  return (
    <span className="tags">
      {tags.map((tag) => (
        <Link key={tag} className="tag" to={path(`/test-cases?tag=${encodeURIComponent(tag)}`)}>
          {tag}
        </Link>
      ))}
    </span>
  );
}

const EnabledBadge = ({ enabled }: { enabled: boolean }) =>
  enabled ? <Badge tone="good">Enabled</Badge> : <Badge tone="neutral">Disabled</Badge>;

/** `?version=N`: a whole number from 1; null when absent; NaN when it is anything else. */
function versionParam(value: string | null): number | null {
  if (value === null) return null;
  return /^[1-9][0-9]{0,9}$/.test(value) ? Number(value) : Number.NaN;
}

export function TestCase() {
  const { testCaseId = "" } = useParams();
  const [params] = useSearchParams();
  const asked = versionParam(params.get("version"));
  const { projectId, project, path } = useProject();
  const found = useQuery(
    ConsoleService.method.getTestCase,
    { projectId, testCaseId, ...(asked !== null && { version: asked }) },
    { enabled: !Number.isNaN(asked) },
  );
  if (Number.isNaN(asked))
    return <VersionMissing message="The version in the address is not a version number." />;
  if (isNotFound(project.error)) return <NotFound what="Test case" />;
  // A version no longer kept (or never had): the catalog's words say which are kept.
  if (asked !== null && isNotFound(found.error)) return <VersionMissing message={messageOf(found.error)} />;
  if (isNotFound(found.error)) return <NotFound what="Test case" />;
  if (found.isPending || found.error) return <QueryView query={found} what="the test case" />;
  const { testCase, testPlans, currentVersion } = found.data;
  if (!testCase) return <NotFound what="Test case" />;
  const old = testCase.version !== currentVersion;
  const current = path(`/test-cases/${testCase.id}`);
  return (
    <>
      <p className="eyebrow">
        <Link to={path("/test-cases")}>Test cases</Link>
      </p>
      {old && (
        <div className="notice notice-warning version-banner" role="status">
          <p>
            You are looking at{" "}
            <strong>
              version {testCase.version} of {currentVersion}
            </strong>
            , from <OldTime item={testCase} />
            {changedByName(testCase.updatedBy) && <>, by {changedByName(testCase.updatedBy)}</>}. It is
            read-only.
          </p>
          <Link className="button button-small" to={current}>
            Go to the current version
          </Link>
        </div>
      )}
      <h1 className="title-with-badge">
        <span>{testCase.name}</span> <EnabledBadge enabled={testCase.enabled} />
      </h1>
      <VersionLine item={testCase} />
      {!testCase.enabled && (
        <p className="notice notice-info">
          Disabled: plans and tags leave it out of their runs; a run of chosen test cases still runs it.
        </p>
      )}
      <section className="panel" aria-label="About">
        <Facts>
          <Fact term="Tags">
            <Tags tags={testCase.tags} />
          </Fact>
          <Fact term={old ? "In test plans now" : "In test plans"}>
            {testPlans.length === 0 ? (
              <span className="muted">none</span>
            ) : (
              testPlans.map((plan, i) => (
                <span key={plan.id}>
                  {i > 0 && ", "}
                  <Link to={path(`/test-plans/${plan.id}`)}>{plan.name}</Link>
                </span>
              ))
            )}
          </Fact>
          <Fact term="Created">
            <Time at={testCase.createdAt} />
          </Fact>
        </Facts>
      </section>
      <section aria-labelledby="steps-heading" className="section">
        <h2 id="steps-heading">{plural(testCase.steps.length, "step")}</h2>
        <p className="muted small">
          Run in order; the first that fails ends the test. <code>{"{{NAME}}"}</code> is a variable or a value
          saved by an earlier step.
        </p>
        <StepList steps={testCase.steps} />
      </section>
    </>
  );
}

/** The exact time an old version was stored: "Nov 20, 2026, 10:00 AM". */
function OldTime({ item }: { item: { updatedAt?: TestCaseMessage["updatedAt"] } }) {
  const date = dateOf(item.updatedAt);
  return date ? <time dateTime={date.toISOString()}>{absoluteTime(date)}</time> : <>an unknown time</>;
}

/** `?version=N` names a version that is not kept (or is not a version): say so, link the current one. */
function VersionMissing({ message }: { message: string }) {
  const { testCaseId = "" } = useParams();
  const { path } = useProject();
  return (
    <section className="narrow-page" aria-labelledby="version-missing-title">
      <h1 id="version-missing-title">Version not available</h1>
      <p>{message}</p>
      <p>
        <Link to={path(`/test-cases/${testCaseId}`)}>Go to the current version</Link>
      </p>
    </section>
  );
}
