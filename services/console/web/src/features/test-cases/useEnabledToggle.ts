// Enabling or disabling a test case (Editors and above), from the list or the case's page.
import { useMutation } from "@connectrpc/connect-query";
import type { TestCase } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useInvalidate } from "../../components/useInvalidate";

/** Enables or disables a test case, and says what that means for runs. */
export function useEnabledToggle(projectId: string, onDone: (notice: string) => void) {
  const invalidate = useInvalidate();
  const update = useMutation(ConsoleService.method.updateTestCase);
  const toggle = (testCase: TestCase) =>
    update.mutate(
      { projectId, testCaseId: testCase.id, enabled: !testCase.enabled },
      {
        onSuccess: async () => {
          // The list and the case's page show its state; a plan's page reads it when opened.
          await invalidate(ConsoleService.method.listTestCases, ConsoleService.method.getTestCase);
          onDone(
            testCase.enabled
              ? `${testCase.name} disabled: plans and tags leave it out of their runs.`
              : `${testCase.name} enabled: plans and tags run it again.`,
          );
        },
      },
    );
  return { toggle, pending: update.isPending, error: update.error };
}
