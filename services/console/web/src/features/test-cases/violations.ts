// The catalog's FieldViolations for a test case, each put at the field of the form it names. Paths
// are the request's (testrun.common.v1.FieldViolation.field): `name`, `tags[3]`, `steps`,
// `steps[1].name`, `steps[1].http.request.path`, `steps[0].http.expect.status[2]`,
// `steps[0].http.save["token"]`; an update names the lists inside their wrappers (`tags.tags[3]`,
// `steps.steps[1]…`). Indexes are those of the draft that was sent, so each error stays with its
// step when the steps are reordered afterwards; and it stays only while its field still holds what
// was sent (as-sent.ts).
import type { FieldViolation } from "@testrun/gen/testrun/common/v1/errors_pb";
import { stillAsSent } from "../../as-sent.js";
import { sentence } from "../../format.js";
import { type CaseDraft, logicOf } from "../step-editor/kinds.js";
import { addMessage, type FieldId, type FieldMessages, stepField } from "../step-editor/model.js";

/** Where a catalog path points in the sent draft, and the words to put before its description. */
export function fieldOfPath(path: string, sent: CaseDraft): { field: FieldId; prefix?: string } | undefined {
  const unwrapped = path.replace(/^steps\.steps(?=\[|$)/, "steps").replace(/^tags\.tags(?=\[|$)/, "tags");
  if (unwrapped === "name" || unwrapped === "steps" || unwrapped === "tags") return { field: unwrapped };
  const tag = /^tags\[(\d+)\]$/.exec(unwrapped);
  if (tag) {
    const text = sent.tags[Number(tag[1])];
    return { field: "tags", ...(text !== undefined && { prefix: `“${text}”: ` }) };
  }
  const inStep = /^steps\[(\d+)\](.*)$/.exec(unwrapped);
  if (!inStep) return undefined;
  const step = sent.steps[Number(inStep[1])];
  if (!step) return { field: "steps" };
  const rest = inStep[2] ?? "";
  // `steps[i]` itself (a NUL character somewhere in it) and its name: shown at the step's name.
  if (rest === "" || rest === ".name") return { field: stepField(step.key, "name") };
  const kindPrefix = `.${step.kind}`;
  if (!rest.startsWith(kindPrefix)) return { field: stepField(step.key, "name") };
  const inKind = logicOf(step).fieldOf(rest.slice(kindPrefix.length), step.draft);
  if (!inKind) return undefined;
  return { field: stepField(step.key, inKind.field), ...(inKind.prefix && { prefix: inKind.prefix }) };
}

/**
 * Every violation as a sentence at its field; those naming no field of the form (none the
 * catalog sends today) are returned apart, to be shown above the buttons.
 */
export function violationMessages(
  violations: readonly FieldViolation[],
  sent: CaseDraft,
): { fields: FieldMessages; unplaced: string[] } {
  const fields: FieldMessages = new Map();
  const unplaced: string[] = [];
  for (const violation of violations) {
    const place = fieldOfPath(violation.field, sent);
    if (place) addMessage(fields, place.field, `${place.prefix ?? ""}${sentence(violation.description)}`);
    else unplaced.push(`${violation.field}: ${violation.description}`);
  }
  return { fields, unplaced };
}

/** What a field of the form (`name`, `tags`, `steps`, `s3:request.path`) holds in a draft. */
export function valueOfField(draft: CaseDraft, field: FieldId): unknown {
  if (field === "name" || field === "tags" || field === "steps") return draft[field];
  const colon = field.indexOf(":");
  const step = draft.steps.find((candidate) => candidate.key === field.slice(0, colon));
  if (colon < 0 || !step) return undefined;
  const inStep = field.slice(colon + 1);
  return inStep === "name" ? step.name : logicOf(step).valueAt(inStep, step.draft);
}

/** The messages whose field still holds, in `current`, what was sent in `sent`. */
export function stillAtSentValues(
  messages: FieldMessages,
  sent: CaseDraft,
  current: CaseDraft,
): FieldMessages {
  return new Map(
    [...messages].filter(([field]) => stillAsSent(valueOfField(sent, field), valueOfField(current, field))),
  );
}
