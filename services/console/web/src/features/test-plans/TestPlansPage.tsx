// A project's test plans. Editors and above create, edit and delete them (PlanEditor.tsx,
// DeleteTestPlanDialog.tsx; docs/console.md, "Authoring").
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { Link } from "react-router";
import { isNotFound } from "../../api";
import { DataTable } from "../../components/DataTable";
import { DoneNotice } from "../../components/ListPage";
import { Empty, NotFound, QueryView } from "../../components/States";
import { Time } from "../../components/Time";
import { useProject } from "../../project";
import { useDone } from "./useDone";

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
      <DoneNotice done={deleted && `Test plan ${deleted} deleted.`} />
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
