// A project's test cases, filtered by tag and by a search in their names (both in the URL). Editors
// and above create, edit, enable or disable them, and export or import them with the plans as one
// file (the editor is TestCaseEditorPage.tsx; docs/console.md, "Authoring test cases").
import { useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useDeferredValue, useState } from "react";
import { Link, useSearchParams } from "react-router";
import { isNotFound } from "../../api";
import { ErrorNotice } from "../../components/Dialog";
import { DoneNotice } from "../../components/ListPage";
import { Empty, NotFound, QueryView } from "../../components/States";
import { useProject } from "../../project";
import { CaseFilters } from "./CaseFilters";
import { CaseTable } from "./CaseTable";
import { type FileDialog, FileDialogs } from "./FileDialogs";
import { useEnabledToggle } from "./useEnabledToggle";
import { useNotice } from "./useNotice";

export function TestCases() {
  const { projectId, project, name, editor, path } = useProject();
  const [notice, setNotice] = useNotice();
  const enabling = useEnabledToggle(projectId, setNotice);
  const [params, setParams] = useSearchParams();
  const [dialog, setDialog] = useState<FileDialog>();
  const [opened, setOpened] = useState(new Set<FileDialog>());
  const open = (which: FileDialog) => {
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
            <Link className="button" to={path("/test-cases/new?kind=spec")}>
              New Playwright spec
            </Link>
          )}
          {editor && (
            <Link className="button button-primary" to={path("/test-cases/new")}>
              New test case
            </Link>
          )}
        </div>
      </div>
      <p className="lead">
        Named steps, or a Playwright spec, run against an environment. Plans and tags select which ones a run
        executes. Export and Import move them, with the plans, as one file to keep in a repository.
      </p>
      <DoneNotice done={notice} />
      <ErrorNotice error={enabling.error} />
      <CaseFilters search={search} tag={tag} every={all.data?.testCases} onChange={set} />
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
      <FileDialogs
        projectId={projectId}
        projectName={project.data?.project?.name ?? ""}
        opened={opened}
        open={dialog}
        editor={editor}
        onClose={() => setDialog(undefined)}
      />
    </>
  );
}
