// Creating and editing a test case (Editors and above): its name, tags, enabled flag and steps in a
// form, or the same test case as JSON in the file format of docs/runs.md; both edit one model.
// `{{NAME}}` references are checked as they are typed; what the catalog refuses is shown at the
// field it names, focus on the first. Leaving with unsaved changes asks first. A save is made on the
// version the editor loaded: when someone else saved since, it is refused and the conflict dialog
// offers to copy the draft or reload (docs/console.md, "Authoring test cases", "Two people editing").
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useState } from "react";
import { Link, useParams, useSearchParams } from "react-router";
import { isNotFound } from "../../api";
import { NotFound, QueryView } from "../../components/States";
import { useProject } from "../../project";
import { draftOfCase, emptyCase } from "../step-editor/kinds";
import { CaseEditor } from "./CaseEditor";
import { NewSpecCase } from "./NewSpecCase";

export function TestCaseEditor() {
  const { testCaseId } = useParams();
  const [params] = useSearchParams();
  const { projectId, project, editor, path } = useProject();
  const found = useQuery(
    ConsoleService.method.getTestCase,
    { projectId, testCaseId },
    { enabled: testCaseId !== undefined },
  );
  // Bumped by "Reload the current version": the editor starts again from the case as read now.
  const [generation, setGeneration] = useState(0);
  if (isNotFound(project.error) || isNotFound(found.error)) return <NotFound what="Test case" />;
  if (project.isPending || project.error) return <QueryView query={project} what="the project" />;
  if (testCaseId !== undefined && (found.isPending || found.error))
    return <QueryView query={found} what="the test case" />;
  const loaded = found.data?.testCase;
  if (testCaseId !== undefined && !loaded) return <NotFound what="Test case" />;
  const back = loaded ? path(`/test-cases/${loaded.id}`) : path("/test-cases");
  if (!editor)
    return (
      <section className="narrow-page">
        <h1>Editors change test cases</h1>
        <p>Your role in this project lets you read test cases, not change them.</p>
        <p>
          <Link to={back}>Back to {loaded ? loaded.name : "the test cases"}</Link>
        </p>
      </section>
    );
  // A Playwright spec case (`?kind=spec` for a new one) has files, not steps: its own form, and
  // its page edits an existing one's files.
  if (!loaded && params.get("kind") === "spec") return <NewSpecCase />;
  if (loaded?.playwright)
    return (
      <section className="narrow-page">
        <h1>This test case is a Playwright spec</h1>
        <p>Its files are edited on its page.</p>
        <p>
          <Link to={back}>Back to {loaded.name}</Link>
        </p>
      </section>
    );
  const { draft, unknownKinds } = loaded ? draftOfCase(loaded) : { draft: emptyCase(), unknownKinds: 0 };
  if (unknownKinds > 0)
    return (
      <section className="narrow-page">
        <h1>This test case cannot be edited here yet</h1>
        <p>It has steps of a kind this console does not know. Edit it from a file with testrunctl.</p>
        <p>
          <Link to={back}>Back to {loaded?.name}</Link>
        </p>
      </section>
    );
  const reload = async () => {
    const { error } = await found.refetch();
    // Deleted since: this page says so once the editor is gone.
    if (error && !isNotFound(error)) throw error;
    setGeneration((n) => n + 1);
  };
  // Keyed by the case and the reloads: the form reads the loaded case once and never takes a
  // background refetch over an edit.
  return (
    <CaseEditor
      key={`${loaded?.id ?? "new"}:${generation}`}
      projectId={projectId}
      loaded={loaded}
      initial={draft}
      onReload={reload}
    />
  );
}
