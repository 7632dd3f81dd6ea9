// A project's test plans, and one plan with its test cases in run order. Editors and above create,
// edit and delete them (TestPlanEditor.tsx, DeleteTestPlanDialog.tsx; docs/console.md, "Authoring").
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useState } from "react";
import { Link, useLocation, useParams } from "react-router";
import { isNotFound } from "../api";
import { PlanBadges } from "../components/Badges";
import { DataTable } from "../components/DataTable";
import { DeleteTestPlanDialog } from "../components/DeleteTestPlanDialog";
import { Empty, NotFound, QueryView } from "../components/States";
import { Time } from "../components/Time";
import { VersionLine } from "../components/Version";
import { plural } from "../format";
import { useProject } from "../project";
import { CaseTable } from "./TestCases";

/** What the editor or the delete dialog left for the page they went to. */
const useDone = () => useLocation().state as { saved?: string; deleted?: string } | null;

export function TestPlans() {
  const { projectId, project, name, path, editor } = useProject();
  const plans = useQuery(ConsoleService.method.listTestPlans, { projectId });
  const deleted = useDone()?.deleted;
  if (isNotFound(project.error) || isNotFound(plans.error)) return <NotFound what="Project" />;
  return (
    <>
      <p className="eyebrow">{name}</p>
      <div className="page-head">
        <h1>Test plans</h1>
        {editor && (
          <Link className="button button-primary" to={path("/test-plans/new")}>
            New test plan
          </Link>
        )}
      </div>
      <p className="lead">
        Named, ordered lists of test cases that run together, e.g. the checks of every deploy.
      </p>
      {project.data && !editor && (
        <p className="notice notice-info">Viewers see the test plans; Editors and above change them.</p>
      )}
      {deleted && (
        <p className="notice notice-info" role="status">
          Test plan {deleted} deleted.
        </p>
      )}
      <QueryView
        query={plans}
        what="test plans"
        isEmpty={(data) => data.testPlans.length === 0}
        empty={
          <Empty title="No test plans yet.">
            <p>
              {editor ? (
                <>
                  Create one with <Link to={path("/test-plans/new")}>New test plan</Link>, or with{" "}
                  <code>testrunctl plan create</code>.
                </>
              ) : (
                "An Editor creates them."
              )}
            </p>
          </Empty>
        }
      >
        {(data) => (
          <DataTable
            rows={data.testPlans}
            columns={[
              {
                label: "Name",
                className: "cell-strong",
                cell: (plan) => <Link to={path(`/test-plans/${plan.id}`)}>{plan.name}</Link>,
              },
              { label: "Description", cell: (plan) => plan.description || <span className="muted">—</span> },
              { label: "Test cases", cell: (plan) => plan.testCaseCount },
              { label: "Changed", cell: (plan) => <Time at={plan.updatedAt ?? plan.createdAt} /> },
            ]}
          />
        )}
      </QueryView>
    </>
  );
}

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
      {saved && (
        <p className="notice notice-info" role="status">
          {saved}
        </p>
      )}
      <p className="muted">
        {plural(testCases.length, "test case")}, run in this order
        {disabled > 0 &&
          ` (${disabled} disabled: runs of the plan leave ${disabled === 1 ? "it" : "them"} out)`}{" "}
        · <Link to={path(`/runs?plan=${testPlan.id}`)}>runs of this plan</Link>
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
