// Editing a test plan (Editors and above; the catalog decides): the plan editor on the plan as read,
// started again from the current version when the conflict dialog reloads it (docs/console.md,
// "Authoring: test plans", "Two people editing").
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useState } from "react";
import { useParams } from "react-router";
import { isNotFound } from "../../api";
import { NotFound, QueryView } from "../../components/States";
import { useProject } from "../../project";
import { PlanEditor } from "./PlanEditor";
import { ReadOnly } from "./ReadOnly";

export function EditTestPlan() {
  const { testPlanId = "" } = useParams();
  const { projectId, project, editor, path } = useProject();
  const plan = useQuery(ConsoleService.method.getTestPlan, { projectId, testPlanId });
  // Bumped by "Reload the current version": the editor starts again from the plan as read now.
  const [generation, setGeneration] = useState(0);
  if (isNotFound(project.error) || isNotFound(plan.error)) return <NotFound what="Test plan" />;
  if (!project.data) return <QueryView query={project} what="the project" />;
  if (!editor) return <ReadOnly back={path(`/test-plans/${testPlanId}`)} to="the test plan" />;
  if (!plan.data) return <QueryView query={plan} what="the test plan" />;
  const reload = async () => {
    const { error } = await plan.refetch();
    // Deleted since: this page says so once the editor is gone.
    if (error && !isNotFound(error)) throw error;
    setGeneration((n) => n + 1);
  };
  // Keyed: another plan's editor (or a reload) starts from that plan, and a background refetch
  // does not undo edits.
  return (
    <PlanEditor
      key={`${testPlanId}:${generation}`}
      plan={plan.data.testPlan}
      cases={plan.data.testCases}
      onReload={reload}
    />
  );
}
