// A project's test plans, and one plan with its test cases in run order.
import { useQuery } from "@connectrpc/connect-query";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { Link, useParams } from "react-router";
import { isNotFound } from "../api";
import { Empty, Failed, Loading, NotFound } from "../components/States";
import { Time } from "../components/Time";
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
      {plans.isPending && <Loading what="test plans" />}
      {plans.error && <Failed error={plans.error} retry={() => void plans.refetch()} />}
      {plans.data?.testPlans.length === 0 && (
        <Empty title="No test plans yet.">
          <p>
            An operator creates them with <code>testrunctl plan create</code>.
          </p>
        </Empty>
      )}
      {plans.data && plans.data.testPlans.length > 0 && (
        <div className="table-scroll">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Description</th>
                <th scope="col">Test cases</th>
                <th scope="col">Changed</th>
              </tr>
            </thead>
            <tbody>
              {plans.data.testPlans.map((plan) => (
                <tr key={plan.id}>
                  <td data-label="Name" className="cell-strong">
                    <Link to={path(`/test-plans/${plan.id}`)}>{plan.name}</Link>
                  </td>
                  <td data-label="Description">{plan.description || <span className="muted">—</span>}</td>
                  <td data-label="Test cases">{plan.testCaseCount}</td>
                  <td data-label="Changed">
                    <Time at={plan.updatedAt ?? plan.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

export function TestPlan() {
  const { testPlanId = "" } = useParams();
  const { projectId, project, path } = useProject();
  const plan = useQuery(ConsoleService.method.getTestPlan, { projectId, testPlanId });
  if (isNotFound(plan.error) || isNotFound(project.error)) return <NotFound what="Test plan" />;
  if (plan.isPending) return <Loading what="the test plan" />;
  if (plan.error) return <Failed error={plan.error} retry={() => void plan.refetch()} />;
  const { testPlan, testCases } = plan.data;
  return (
    <>
      <p className="eyebrow">
        <Link to={path("/test-plans")}>Test plans</Link>
      </p>
      <h1>{testPlan?.name}</h1>
      {testPlan?.description && <p className="lead">{testPlan.description}</p>}
      <p className="muted">
        {plural(testCases.length, "test case")}, run in this order (disabled ones are left out of a run) ·
        changed <Time at={testPlan?.updatedAt ?? testPlan?.createdAt} /> ·{" "}
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
