// A project's test plans, and one plan with its test cases in run order.
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { Link, useParams } from "react-router";
import { isNotFound } from "../api";
import { DataTable } from "../components/DataTable";
import { Empty, NotFound, QueryView } from "../components/States";
import { Time } from "../components/Time";
import { VersionLine } from "../components/Version";
import { plural } from "../format";
import { useProject } from "../project";
import { CaseTable } from "./TestCases";

export function TestPlans() {
  const { projectId, project, name, path } = useProject();
  const plans = useQuery(ConsoleService.method.listTestPlans, { projectId });
  if (isNotFound(project.error) || isNotFound(plans.error)) return <NotFound what="Project" />;
  return (
    <>
      <p className="eyebrow">{name}</p>
      <h1>Test plans</h1>
      <p className="lead">
        Named, ordered lists of test cases that run together, e.g. the checks of every deploy.
      </p>
      <QueryView
        query={plans}
        what="test plans"
        isEmpty={(data) => data.testPlans.length === 0}
        empty={
          <Empty title="No test plans yet.">
            <p>
              An operator creates them with <code>testrunctl plan create</code>.
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
  const { projectId, project, path } = useProject();
  const plan = useQuery(ConsoleService.method.getTestPlan, { projectId, testPlanId });
  if (isNotFound(plan.error) || isNotFound(project.error)) return <NotFound what="Test plan" />;
  if (plan.isPending || plan.error) return <QueryView query={plan} what="the test plan" />;
  const { testPlan, testCases } = plan.data;
  return (
    <>
      <p className="eyebrow">
        <Link to={path("/test-plans")}>Test plans</Link>
      </p>
      <h1>{testPlan?.name}</h1>
      {testPlan && <VersionLine item={testPlan} />}
      {testPlan?.description && <p className="lead">{testPlan.description}</p>}
      <p className="muted">
        {plural(testCases.length, "test case")}, run in this order (disabled ones are left out of a run) ·{" "}
        <Link to={path(`/runs?plan=${testPlan?.id}`)}>runs of this plan</Link>
      </p>
      {testCases.length === 0 ? (
        <Empty title="This plan has no test cases." />
      ) : (
        <CaseTable testCases={testCases} numbered />
      )}
    </>
  );
}
