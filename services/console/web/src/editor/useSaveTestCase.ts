// The editor's one way to save: it holds the test case as it was loaded (none for a new one) and
// writes a draft to it, whole (name, tags, enabled, steps), with CreateTestCase or UpdateTestCase,
// on the version loaded (expected_version): a save over someone else's newer one is refused.
// What the catalog refuses comes back as the error, with the draft that was sent, so each
// FieldViolation is put at the field it names even if the steps were reordered since.
import { create, toJsonString } from "@bufbuild/protobuf";
import { useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import type { TestCase } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import {
  ConsoleService,
  CreateTestCaseRequestSchema,
  UpdateTestCaseRequestSchema,
} from "@testrun/gen/testrun/console/v1/console_pb";
import { useState } from "react";
import type { CaseDraft, CaseValue } from "./kinds";

/**
 * The most the console's API reads in one message (apiReadMaxBytes, services/console/src/http/app.ts;
 * docs/security.md, "Resource limits"): a bigger test case is refused before it is sent.
 */
export const consoleMessageBytes = 1024 * 1024;
const encoder = new TextEncoder();
const mib = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(2)} MiB`;

export function useSaveTestCase(projectId: string, loaded: TestCase | undefined) {
  const queryClient = useQueryClient();
  const createCase = useMutation(ConsoleService.method.createTestCase);
  const updateCase = useMutation(ConsoleService.method.updateTestCase);
  const mutation = loaded ? updateCase : createCase;
  const [sent, setSent] = useState<CaseDraft>();
  const [tooLarge, setTooLarge] = useState<string>();

  /** Sends the draft (its catalog form `value`); `onSaved` gets the test case as stored. */
  const save = (
    draft: CaseDraft,
    value: CaseValue,
    { onSaved, onRefused }: { onSaved: (testCase: TestCase) => void; onRefused: (error?: unknown) => void },
  ) => {
    /** Whether the request's JSON (what connect-web sends) fits the console's message bound. */
    const fits = (json: string) => {
      const bytes = encoder.encode(json).length;
      if (bytes <= consoleMessageBytes) return true;
      setTooLarge(
        `This test case is ${mib(bytes)} as sent; the console saves at most 1 MiB at once. Make its bodies smaller, or create it from a file with testrunctl case create.`,
      );
      onRefused();
      return false;
    };
    const callbacks = {
      onSuccess: async ({ testCase }: { testCase?: TestCase }) => {
        await queryClient.invalidateQueries();
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
        expectedVersion: loaded.version,
      });
      if (!fits(toJsonString(UpdateTestCaseRequestSchema, request))) return;
      setTooLarge(undefined);
      setSent(draft);
      updateCase.mutate(request, callbacks);
    } else {
      const request = create(CreateTestCaseRequestSchema, { projectId, ...value });
      if (!fits(toJsonString(CreateTestCaseRequestSchema, request))) return;
      setTooLarge(undefined);
      setSent(draft);
      createCase.mutate(request, callbacks);
    }
  };

  return { save, pending: mutation.isPending, error: mutation.error, sent, tooLarge };
}
