// A project's test cases (filtered by tag and by a search in their names, both in the URL), and one
// test case with its tags, state, plans and steps.
import { useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import type { TestCase as TestCaseMessage } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { lazy, Suspense, useDeferredValue, useState } from "react";
import { Link, useParams, useSearchParams } from "react-router";
import { isNotFound } from "../api";
import { DataTable } from "../components/DataTable";
import { Fact, Facts } from "../components/Facts";
import { Empty, Loading, NotFound, QueryView } from "../components/States";
import { Badge } from "../components/Status";
import { StepList } from "../components/Steps";
import { Time } from "../components/Time";
import { plural } from "../format";
import { useProject } from "../project";

// The file format's reader and writer (with a YAML library) load when a dialog first opens.
const ExportDialog = lazy(() =>
  import("../components/ContentDialogs").then((module) => ({ default: module.ExportDialog })),
);
const ImportDialog = lazy(() =>
  import("../components/ContentDialogs").then((module) => ({ default: module.ImportDialog })),
);

export function TestCases() {
  const { projectId, project, name, editor } = useProject();
  const [params, setParams] = useSearchParams();
  const [dialog, setDialog] = useState<"export" | "import">();
  const [opened, setOpened] = useState(new Set<"export" | "import">());
  const open = (which: "export" | "import") => {
    setOpened((before) => new Set(before).add(which));
    setDialog(which);
  };
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
      <div className="page-head">
        <h1>Test cases</h1>
        <div className="row-actions">
          <button type="button" className="button" onClick={() => open("export")}>
            Export
          </button>
          {editor && (
            <button type="button" className="button" onClick={() => open("import")}>
              Import
            </button>
          )}
        </div>
      </div>
      <p className="lead">
        Named steps run against an environment. Plans and tags select which ones a run executes. Export and
        Import move them, with the plans, as one file to keep in a repository.
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
                {editor ? (
                  <>
                    Import them from a file with <strong>Import</strong>, or with{" "}
                    <code>testrunctl content import</code>.
                  </>
                ) : (
                  "An Editor imports them from a file."
                )}
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
      {/* Mounted once first opened, then kept: closing hands focus back to the button. */}
      <Suspense fallback={<Loading what="the dialog" />}>
        {opened.has("export") && (
          <ExportDialog
            projectId={projectId}
            projectName={project.data?.project?.name ?? ""}
            open={dialog === "export"}
            onClose={() => setDialog(undefined)}
          />
        )}
        {opened.has("import") && editor && (
          <ImportDialog
            projectId={projectId}
            open={dialog === "import"}
            onClose={() => setDialog(undefined)}
          />
        )}
      </Suspense>
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

export function TestCase() {
  const { testCaseId = "" } = useParams();
  const { projectId, project, path } = useProject();
  const found = useQuery(ConsoleService.method.getTestCase, { projectId, testCaseId });
  if (isNotFound(found.error) || isNotFound(project.error)) return <NotFound what="Test case" />;
  if (found.isPending || found.error) return <QueryView query={found} what="the test case" />;
  const { testCase, testPlans } = found.data;
  if (!testCase) return <NotFound what="Test case" />;
  return (
    <>
      <p className="eyebrow">
        <Link to={path("/test-cases")}>Test cases</Link>
      </p>
      <h1 className="title-with-badge">
        <span>{testCase.name}</span> <EnabledBadge enabled={testCase.enabled} />
      </h1>
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
          <Fact term="In test plans">
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
          <Fact term="Changed">
            <Time at={testCase.updatedAt ?? testCase.createdAt} />
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
