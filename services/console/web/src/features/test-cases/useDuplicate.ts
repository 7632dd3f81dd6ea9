// Duplicating a test case (Editors and above): a copy named "… (copy)", then its page, saying so.
import { useMutation } from "@connectrpc/connect-query";
import type { TestCase } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { useNavigate } from "react-router";
import { useProject } from "../../project";
import { copyName } from "../step-editor/kinds";

export function useDuplicate(projectId: string) {
  const { path } = useProject();
  const navigate = useNavigate();
  const duplicate = useMutation(ConsoleService.method.createTestCase);
  const copy = (testCase: TestCase) =>
    duplicate.mutate(
      {
        projectId,
        name: copyName(testCase.name),
        tags: testCase.tags,
        enabled: testCase.enabled,
        recordTrace: testCase.recordTrace,
        retries: testCase.retries,
        steps: testCase.steps,
        // A spec case's copy has the same files (an import matches it by the same spec path as well).
        playwright: testCase.playwright,
      },
      {
        onSuccess: ({ testCase: created }) => {
          if (created)
            navigate(path(`/test-cases/${created.id}`), {
              state: { notice: `${created.name} created, a copy of ${testCase.name}.` },
            });
        },
      },
    );
  return { copy, pending: duplicate.isPending, error: duplicate.error };
}
