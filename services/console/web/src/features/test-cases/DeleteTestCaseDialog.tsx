// Says what deleting a test case does (catalog.proto, DeleteTestCase) before it is done; then the
// list. Made on the version the page shows: when someone changed the case since, nothing is
// deleted and the dialog says who and when.
import { useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import type { TestCase, TestPlan } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useNavigate } from "react-router";
import { Dialog } from "../../components/Dialog";
import { useInvalidate } from "../../components/useInvalidate";
import { DeleteActions } from "../versions/DeleteActions";

export function DeleteTestCaseDialog({
  projectId,
  testCase,
  testPlans,
  onClose,
}: {
  projectId: string;
  testCase: TestCase | undefined;
  testPlans: TestPlan[];
  onClose: () => void;
}) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const invalidate = useInvalidate();
  const remove = useMutation(ConsoleService.method.deleteTestCase);
  const close = () => {
    remove.reset();
    onClose();
  };
  const confirm = () =>
    remove.mutate(
      { projectId, testCaseId: testCase?.id ?? "", expectedVersion: testCase?.version },
      {
        onSuccess: async () => {
          await invalidate(ConsoleService.method.listTestCases);
          navigate(`/projects/${projectId}/test-cases`, {
            replace: true,
            state: { notice: `${testCase?.name ?? "The test case"} deleted.` },
          });
          // Forgotten once left, so no page shows the deleted case from the cache.
          const id = testCase?.id;
          if (id)
            queryClient.removeQueries({ predicate: (query) => JSON.stringify(query.queryKey).includes(id) });
        },
      },
    );
  return (
    <Dialog title={`Delete ${testCase?.name ?? "test case"}?`} open={testCase !== undefined} onClose={close}>
      <div className="stack">
        <ul className="consequences">
          <li>The test case and its steps are deleted for good; this cannot be undone.</li>
          {testPlans.length === 0 ? (
            <li>No test plan holds it.</li>
          ) : (
            <li>
              {testPlans.length === 1 ? "The test plan " : `The ${testPlans.length} test plans `}
              {testPlans.map((plan, i) => (
                <span key={plan.id}>
                  {i > 0 && (i === testPlans.length - 1 ? " and " : ", ")}
                  <strong>{plan.name}</strong>
                </span>
              ))}{" "}
              {testPlans.length === 1 ? "loses it: its" : "lose it: their"} next runs leave it out.
            </li>
          )}
          <li>
            Runs already started keep their results, and the steps they ran. Rerunning one of them cannot run
            this test case again.
          </li>
        </ul>
        <DeleteActions
          error={remove.error}
          label="Delete test case"
          busy={remove.isPending}
          onConfirm={confirm}
          onCancel={close}
          onLook={() => {
            close();
            // The page shows the version someone else stored.
            void invalidate(ConsoleService.method.getTestCase);
          }}
        />
      </div>
    </Dialog>
  );
}
