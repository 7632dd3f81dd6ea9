// One test plan with its test cases in run order, its runs and its badges. Editors and above edit
// and delete it (PlanEditor.tsx, DeleteTestPlanDialog.tsx; docs/console.md, "Authoring").
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useState } from "react";
import { Link, useParams } from "react-router";
import { isNotFound } from "../../api";
import { DoneNotice } from "../../components/ListPage";
import { Empty, NotFound, QueryView } from "../../components/States";
import { VersionLine } from "../../components/Version";
import { plural } from "../../format";
import { useProject } from "../../project";
import { PlanBadges } from "../badges/PlanBadges";
import { CaseTable } from "../test-cases/CaseTable";
import { retriesLabel } from "../test-cases/retries";
import { DeleteTestPlanDialog } from "./DeleteTestPlanDialog";
import { useDone } from "./useDone";

export function TestPlan() {
  const { testPlanId = "" } = useParams();
  const { projectId, project, path, editor } = useProject();
  const plan = useQuery(ConsoleService.method.getTestPlan, { projectId, testPlanId });
  const saved = useDone()?.saved;
  const [deleting, setDeleting] = useState(false);
  if (isNotFound(plan.error) || isNotFound(project.error)) return <NotFound what="Test plan" />;
  if (plan.isPending || plan.error) return <QueryView query={plan} what="the test plan" />;
  const { testPlan, testCases } = plan.data;
  if (!testPlan) return <NotFound what="Test plan" />;
  const disabled = testCases.filter((c) => !c.enabled).length;
  return (
    <>
      <p className="eyebrow">
        <Link to={path("/test-plans")}>Test plans</Link>
      </p>
      <div className="page-head">
        <h1>{testPlan.name}</h1>
        {editor && (
          <div className="row-actions">
            <Link className="button" to={path(`/test-plans/${testPlan.id}/edit`)}>
              Edit test plan
            </Link>
            <button type="button" className="button button-danger" onClick={() => setDeleting(true)}>
              Delete test plan
            </button>
          </div>
        )}
      </div>
      <VersionLine item={testPlan} />
      {testPlan.description && <p className="lead">{testPlan.description}</p>}
      <DoneNotice done={saved} />
      <p className="muted">
        {plural(testCases.length, "test case")}, run in this order
        {disabled > 0 &&
          ` (${disabled} disabled: runs of the plan leave ${disabled === 1 ? "it" : "them"} out)`}{" "}
        · <Link to={path(`/runs?plan=${testPlan.id}`)}>runs of this plan</Link>
        {" · "}
        {testPlan.retries === undefined
          ? "retries: each test case's own"
          : `retries: ${retriesLabel(testPlan.retries).toLowerCase()} for every test case`}
      </p>
      {testCases.length === 0 ? (
        <Empty title="This plan has no test cases.">
          <p>A plan without enabled test cases cannot be run.{editor && " Edit it to add some."}</p>
        </Empty>
      ) : (
        <CaseTable testCases={testCases} numbered />
      )}
      <PlanBadges projectId={projectId} testPlanId={testPlan.id} editor={editor} />
      {editor && <DeleteTestPlanDialog plan={testPlan} open={deleting} onClose={() => setDeleting(false)} />}
    </>
  );
}
