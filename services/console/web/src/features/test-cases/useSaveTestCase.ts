// The editor's one way to save: it holds the test case as it was loaded (none for a new one) and
// writes a draft to it, whole (name, tags, enabled, steps), with CreateTestCase or UpdateTestCase,
// on the version loaded (expected_version): a save over someone else's newer one is refused.
// What the catalog refuses comes back as the error, with the draft that was sent, so each
// FieldViolation is put at the field it names even if the steps were reordered since.
// Both go in binary (binaryTransport): a case may hold up to 1 MiB of body per step, and in that
// encoding the request is as large as the catalog's, whose bound it is measured against.
import { create } from "@bufbuild/protobuf";
import { useMutation } from "@connectrpc/connect-query";
import type { TestCase } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import {
  ConsoleService,
  CreateTestCaseRequestSchema,
  UpdateTestCaseRequestSchema,
} from "@testrun/gen/testrun/console/v1/console_pb";
import { useState } from "react";
import { binaryTransport } from "../../api";
import { useInvalidate } from "../../components/useInvalidate";
import type { CaseDraft, CaseValue } from "../step-editor/kinds";
import { saveSizeProblem } from "./save-size";

export function useSaveTestCase(projectId: string, loaded: TestCase | undefined) {
  const invalidate = useInvalidate();
  const createCase = useMutation(ConsoleService.method.createTestCase, { transport: binaryTransport });
  const updateCase = useMutation(ConsoleService.method.updateTestCase, { transport: binaryTransport });
  const mutation = loaded ? updateCase : createCase;
  const [sent, setSent] = useState<CaseDraft>();
  const [tooLarge, setTooLarge] = useState<string>();

  /** Sends the draft (its catalog form `value`); `onSaved` gets the test case as stored. */
  const save = (
    draft: CaseDraft,
    value: CaseValue,
    { onSaved, onRefused }: { onSaved: (testCase: TestCase) => void; onRefused: (error?: unknown) => void },
  ) => {
    /** Whether the request fits what the console reads of it; if not, the page says so. */
    const fits = (problem: string | undefined) => {
      if (!problem) return true;
      setTooLarge(problem);
      onRefused();
      return false;
    };
    const callbacks = {
      onSuccess: async ({ testCase }: { testCase?: TestCase }) => {
        // The case's page (where the editor goes) and the list show what was saved.
        await invalidate(ConsoleService.method.getTestCase, ConsoleService.method.listTestCases);
        if (testCase) onSaved(testCase);
      },
      onError: (error: unknown) => onRefused(error),
    };
    if (loaded) {
      const request = create(UpdateTestCaseRequestSchema, {
        projectId,
        testCaseId: loaded.id,
        name: value.name,
        tags: { tags: value.tags },
        enabled: value.enabled,
        steps: { steps: value.steps },
        recordTrace: value.recordTrace,
        retries: value.retries,
        expectedVersion: loaded.version,
      });
      if (!fits(saveSizeProblem(UpdateTestCaseRequestSchema, request))) return;
      setTooLarge(undefined);
      setSent(draft);
      updateCase.mutate(request, callbacks);
    } else {
      const request = create(CreateTestCaseRequestSchema, { projectId, ...value });
      if (!fits(saveSizeProblem(CreateTestCaseRequestSchema, request))) return;
      setTooLarge(undefined);
      setSent(draft);
      createCase.mutate(request, callbacks);
    }
  };

  return { save, pending: mutation.isPending, error: mutation.error, sent, tooLarge };
}
