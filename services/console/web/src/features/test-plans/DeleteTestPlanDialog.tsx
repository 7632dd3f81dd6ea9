// Deleting a test plan (Editors and above; the catalog decides), after saying what happens: the
// plan goes, its test cases stay, its runs keep their results (docs/console.md, "Authoring: test
// plans"). Then the project's plan list, saying it was deleted. Made on the version the page shows:
// when someone changed the plan since, nothing is deleted and the dialog says who and when.
import { useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import type { TestPlan } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useNavigate } from "react-router";
import { Dialog, type DialogProps } from "../../components/Dialog";
import { useInvalidate } from "../../components/useInvalidate";
import { plural } from "../../format";
import { DeleteActions } from "../versions/DeleteActions";

export function DeleteTestPlanDialog({ plan, open, onClose }: DialogProps & { plan: TestPlan }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const invalidate = useInvalidate();
  const remove = useMutation(ConsoleService.method.deleteTestPlan);
  const close = () => {
    remove.reset();
    onClose();
  };
  const confirm = () =>
    remove.mutate(
      { projectId: plan.projectId, testPlanId: plan.id, expectedVersion: plan.version },
      {
        onSuccess: () => {
          close();
          // Leave first: the plan's own query would now answer NOT_FOUND. Then forget it, so no
          // page shows the deleted plan, not even while the lists reload.
          navigate(`/projects/${plan.projectId}/test-plans`, { state: { deleted: plan.name } });
          queryClient.removeQueries({
            predicate: (query) => JSON.stringify(query.queryKey).includes(plan.id),
          });
          void invalidate(ConsoleService.method.listTestPlans);
        },
      },
    );
  return (
    <Dialog title={`Delete ${plan.name}?`} open={open} onClose={close}>
      <div className="stack">
        <ul className="consequences">
          <li>The plan, with its name, description and order, is deleted for good.</li>
          <li>
            Its {plural(plan.testCaseCount, "test case")} {plan.testCaseCount === 1 ? "stays" : "stay"} in the
            project: only the plan goes.
          </li>
          <li>
            Runs started from it, finished or still running, keep their tests and results; they show the
            plan's id where its name was.
          </li>
          <li>Pipelines and agents that start it by name or id get “not found” (404) from now on.</li>
        </ul>
        <DeleteActions
          error={remove.error}
          label="Delete test plan"
          busy={remove.isPending}
          onConfirm={confirm}
          onCancel={close}
          onLook={() => {
            close();
            // The page shows the version someone else stored.
            void invalidate(ConsoleService.method.getTestPlan);
          }}
        />
      </div>
    </Dialog>
  );
}
