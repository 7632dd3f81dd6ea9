// Creating a test plan (Editors and above; the catalog decides): the plan editor on an empty plan
// (docs/console.md, "Authoring: test plans").
import { isNotFound } from "../../api";
import { NotFound, QueryView } from "../../components/States";
import { useProject } from "../../project";
import { PlanEditor } from "./PlanEditor";
import { ReadOnly } from "./ReadOnly";

export function NewTestPlan() {
  const { project, editor, path } = useProject();
  if (isNotFound(project.error)) return <NotFound what="Project" />;
  // Only until first read: a background refetch that fails must not take the form away.
  if (!project.data) return <QueryView query={project} what="the project" />;
  if (!editor) return <ReadOnly back={path("/test-plans")} to="the test plans" />;
  return <PlanEditor />;
}
