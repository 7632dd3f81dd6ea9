// The editor's JSON view: the test case in the file format of docs/runs.md ("Test cases: the step
// format"), written and read by @testrun/content-file exactly as testrunctl does, so a case copied
// from the console works as a file and the other way round.
import { toJson } from "@bufbuild/protobuf";
import { InputError, testCaseFromFile, testCaseToFile } from "@testrun/content-file";
import { StepSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { type CaseDraft, caseOfDraft, draftOfCase } from "../step-editor/kinds.js";
import type { FieldMessages } from "../step-editor/model.js";

/** The draft as the file format's JSON text, or what in the form stops it being written. */
export function jsonOfDraft(draft: CaseDraft): { text: string } | { problems: FieldMessages } {
  const { value, problems } = caseOfDraft(draft);
  if (problems.size > 0) return { problems };
  return { text: `${JSON.stringify(testCaseToFile(value), null, 2)}\n` };
}

/**
 * The JSON text read back into a draft, or why it cannot be: not JSON (the parser's words), or not a test
 * case (an InputError naming the field by its path in the file, `steps[1].http.method: …`).
 */
export function draftOfJson(text: string): { draft: CaseDraft } | { error: string } {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    // The browser's parser says where (V8: "at position 7 (line 1 column 8)") or quotes the spot.
    return { error: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  try {
    const read = testCaseFromFile(document, "");
    const { draft, unknownKinds } = draftOfCase({
      ...read,
      recordTrace: "recordTrace" in read && read.recordTrace === true,
    });
    if (unknownKinds > 0) return { error: "A step is of a kind this console cannot edit yet." };
    return { draft };
  } catch (error) {
    if (error instanceof InputError) return { error: error.message };
    throw error;
  }
}

/**
 * The draft in one comparable form, for telling whether anything changed: what would be saved (the
 * catalog's messages as JSON), or (when a field cannot be written yet) the form's own texts.
 */
export function snapshotOf(draft: CaseDraft): string {
  const { value, problems } = caseOfDraft(draft);
  if (problems.size === 0)
    return JSON.stringify({ ...value, steps: value.steps.map((step) => toJson(StepSchema, step)) });
  return JSON.stringify({
    ...draft,
    steps: draft.steps.map(({ key: _key, setAside: _aside, ...step }) => step),
  });
}
