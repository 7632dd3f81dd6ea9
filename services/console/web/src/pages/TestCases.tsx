// A project's test cases (filtered by tag and by a search in their names, both in the URL), and one
// test case with its tags, state, plans and steps: the current version, or with `?version=N` one of
// its kept versions, read-only, under a banner saying so (a run's test links there). Editors and
// above create, edit, duplicate, enable or disable, run and delete them (the editor is
// TestCaseEditor.tsx; docs/console.md, "Authoring test cases").
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { keepPreviousData, useQueryClient } from "@tanstack/react-query";
import type { TestCase as TestCaseMessage, TestPlan } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { lazy, type ReactNode, Suspense, useDeferredValue, useState } from "react";
import { Link, useLocation, useNavigate, useParams, useSearchParams } from "react-router";
import { isNotFound, messageOf } from "../api";
import { DataTable } from "../components/DataTable";
import { Dialog, ErrorNotice } from "../components/Dialog";
import { DeleteActions } from "../components/EditConflictDialog";
import { Fact, Facts } from "../components/Facts";
import { StartRunDialog } from "../components/StartRunDialog";
import { Empty, Loading, NotFound, QueryView } from "../components/States";
import { Badge } from "../components/Status";
import { StepList } from "../components/Steps";
import { Time } from "../components/Time";
import { changedByName, VersionLine } from "../components/Version";
import { copyName } from "../features/step-editor/kinds";
import { absoluteTime, dateOf, plural } from "../format";
import { useProject } from "../project";

// The file format's reader and writer (with a YAML library) load when a dialog first opens.
const ExportDialog = lazy(() =>
  import("../components/ContentDialogs").then((module) => ({ default: module.ExportDialog })),
);
const ImportDialog = lazy(() =>
  import("../components/ContentDialogs").then((module) => ({ default: module.ImportDialog })),
);

/** What a page says after a change made here or on the page before (passed in the location). */
function useNotice(): [string | undefined, (notice: string | undefined) => void] {
  const passed = (useLocation().state as { notice?: string } | null)?.notice;
  const [notice, setNotice] = useState<string>();
  return [notice ?? passed, setNotice];
}

function Notice({ text }: { text: string | undefined }) {
  if (!text) return null;
  return (
    <p className="notice notice-info" role="status">
      {text}
    </p>
  );
}

/** Enables or disables a test case, and says what that means for runs. */
function useEnabledToggle(projectId: string, onDone: (notice: string) => void) {
  const queryClient = useQueryClient();
  const update = useMutation(ConsoleService.method.updateTestCase);
  const toggle = (testCase: TestCaseMessage) =>
    update.mutate(
      { projectId, testCaseId: testCase.id, enabled: !testCase.enabled },
      {
        onSuccess: async () => {
          await queryClient.invalidateQueries();
          onDone(
            testCase.enabled
              ? `${testCase.name} disabled: plans and tags leave it out of their runs.`
              : `${testCase.name} enabled: plans and tags run it again.`,
          );
        },
      },
    );
  return { toggle, pending: update.isPending, error: update.error };
}

export function TestCases() {
  const { projectId, project, name, editor, path } = useProject();
  const [notice, setNotice] = useNotice();
  const enabling = useEnabledToggle(projectId, setNotice);
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
          {editor && (
            <Link className="button button-primary" to={path("/test-cases/new")}>
              New test case
            </Link>
          )}
        </div>
      </div>
      <p className="lead">
        Named steps run against an environment. Plans and tags select which ones a run executes. Export and
        Import move them, with the plans, as one file to keep in a repository.
      </p>
      <Notice text={notice} />
      <ErrorNotice error={enabling.error} />
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
              {editor ? (
                <p>
                  Create one with <Link to={path("/test-cases/new")}>New test case</Link>, import a file with{" "}
                  <strong>Import</strong>, or use <code>testrunctl content import</code>.
                </p>
              ) : (
                <p>Editors create them here, or import them from a file.</p>
              )}
            </Empty>
          )
        }
      >
        {(data) => (
          <CaseTable
            testCases={data.testCases}
            actions={
              editor
                ? (testCase) => (
                    <div className="row-actions">
                      <button
                        type="button"
                        className="button button-small"
                        aria-label={`${testCase.enabled ? "Disable" : "Enable"} ${testCase.name}`}
                        disabled={enabling.pending}
                        onClick={() => {
                          setNotice(undefined);
                          enabling.toggle(testCase);
                        }}
                      >
                        {testCase.enabled ? "Disable" : "Enable"}
                      </button>
                      <Link
                        className="button button-small"
                        aria-label={`Edit ${testCase.name}`}
                        to={path(`/test-cases/${testCase.id}/edit`)}
                      >
                        Edit
                      </Link>
                    </div>
                  )
                : undefined
            }
          />
        )}
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
  actions,
}: {
  testCases: TestCaseMessage[];
  numbered?: boolean;
  /** Buttons of a row (Editors and above). */
  actions?: (testCase: TestCaseMessage) => ReactNode;
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
      actions={actions}
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

/** What a test case's page has a dialog open for. */
type Open = "run" | "delete" | undefined;

export function TestCase() {
  const { testCaseId = "" } = useParams();
  const [params] = useSearchParams();
  const asked = versionParam(params.get("version"));
  const { projectId, project, path, editor } = useProject();
  const navigate = useNavigate();
  const found = useQuery(
    ConsoleService.method.getTestCase,
    { projectId, testCaseId, ...(asked !== null && { version: asked }) },
    { enabled: !Number.isNaN(asked) },
  );
  const [notice, setNotice] = useNotice();
  const [open, setOpen] = useState<Open>();
  const enabling = useEnabledToggle(projectId, setNotice);
  const duplicate = useMutation(ConsoleService.method.createTestCase);
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
  const copy = () => {
    setNotice(undefined);
    duplicate.mutate(
      {
        projectId,
        name: copyName(testCase.name),
        tags: testCase.tags,
        enabled: testCase.enabled,
        recordTrace: testCase.recordTrace,
        steps: testCase.steps,
      },
      {
        onSuccess: ({ testCase: created }) => {
          if (created)
            navigate(path(`/test-cases/${created.id}`), {
              state: { notice: `${created.name} created, a copy of ${testCase.name}.` },
            });
        },
      },
    );
  };
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
      <div className="page-head">
        <h1 className="title-with-badge">
          <span>{testCase.name}</span> <EnabledBadge enabled={testCase.enabled} />
        </h1>
        {editor && !old && (
          <div className="page-actions">
            <button type="button" className="button button-primary" onClick={() => setOpen("run")}>
              Run this test
            </button>
            <Link className="button" to={path(`/test-cases/${testCase.id}/edit`)}>
              Edit
            </Link>
            <button
              type="button"
              className="button"
              onClick={copy}
              disabled={duplicate.isPending}
              aria-busy={duplicate.isPending}
            >
              {duplicate.isPending ? "Duplicating…" : "Duplicate"}
            </button>
            <button
              type="button"
              className="button"
              disabled={enabling.pending}
              onClick={() => {
                setNotice(undefined);
                enabling.toggle(testCase);
              }}
            >
              {testCase.enabled ? "Disable" : "Enable"}
            </button>
            <button type="button" className="button button-danger" onClick={() => setOpen("delete")}>
              Delete
            </button>
          </div>
        )}
      </div>
      <VersionLine item={testCase} />
      <Notice text={notice} />
      <ErrorNotice error={enabling.error ?? duplicate.error} />
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
          {(testCase.recordTrace || testCase.steps.some((step) => step.kind.case === "browser")) && (
            <Fact term="Browser trace">
              {testCase.recordTrace ? "Recorded at every run" : "Recorded when the test fails"}
            </Fact>
          )}
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
      {editor && (
        <>
          <StartRunDialog
            projectId={projectId}
            open={open === "run"}
            onClose={() => setOpen(undefined)}
            only={{ id: testCase.id, name: testCase.name }}
          />
          <DeleteTestCaseDialog
            projectId={projectId}
            testCase={open === "delete" ? testCase : undefined}
            testPlans={testPlans}
            onClose={() => setOpen(undefined)}
          />
        </>
      )}
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

/**
 * Says what deleting does (catalog.proto, DeleteTestCase) before it is done; then the list. Made on
 * the version the page shows: when someone changed the case since, nothing is deleted and the
 * dialog says who and when.
 */
function DeleteTestCaseDialog({
  projectId,
  testCase,
  testPlans,
  onClose,
}: {
  projectId: string;
  testCase: TestCaseMessage | undefined;
  testPlans: TestPlan[];
  onClose: () => void;
}) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const remove = useMutation(ConsoleService.method.deleteTestCase);
  const close = () => {
    remove.reset();
    onClose();
  };
  const confirm = () =>
    remove.mutate(
      { projectId, testCaseId: testCase?.id ?? "", expectedVersion: testCase?.version },
      {
        onSuccess: async () => {
          await queryClient.invalidateQueries();
          navigate(`/projects/${projectId}/test-cases`, {
            replace: true,
            state: { notice: `${testCase?.name ?? "The test case"} deleted.` },
          });
        },
      },
    );
  return (
    <Dialog title={`Delete ${testCase?.name ?? "test case"}?`} open={testCase !== undefined} onClose={close}>
      <div className="stack">
        <ul className="consequences">
          <li>The test case and its steps are deleted for good; this cannot be undone.</li>
          {testPlans.length === 0 ? (
            <li>No test plan holds it.</li>
          ) : (
            <li>
              {testPlans.length === 1 ? "The test plan " : `The ${testPlans.length} test plans `}
              {testPlans.map((plan, i) => (
                <span key={plan.id}>
                  {i > 0 && (i === testPlans.length - 1 ? " and " : ", ")}
                  <strong>{plan.name}</strong>
                </span>
              ))}{" "}
              {testPlans.length === 1 ? "loses it: its" : "lose it: their"} next runs leave it out.
            </li>
          )}
          <li>
            Runs already started keep their results, and the steps they ran. Rerunning one of them cannot run
            this test case again.
          </li>
        </ul>
        <DeleteActions
          error={remove.error}
          label="Delete test case"
          busy={remove.isPending}
          onConfirm={confirm}
          onCancel={close}
          onLook={() => {
            close();
            void queryClient.invalidateQueries();
          }}
        />
      </div>
    </Dialog>
  );
}
