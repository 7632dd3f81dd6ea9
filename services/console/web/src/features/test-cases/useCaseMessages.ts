// What the test case editor says at each field: the form's own checks (once an attempt was held
// back by them), the catalog's refusals while the field still holds what was refused, and
// `{{NAME}}` warnings; and what the catalog said that belongs to no field.

import { useMemo } from "react";
import { editConflictOf, fieldViolationsOf, messageOf } from "../../api";
import type { Said } from "../step-editor/kind-editor";
import type { CaseDraft } from "../step-editor/kinds";
import { caseOfDraft } from "../step-editor/kinds";
import type { FieldMessages } from "../step-editor/model";
import type { StepMessages } from "../step-editor/StepsEditor";
import { referenceWarnings } from "./references";
import { stillAtSentValues, violationMessages } from "./violations";

export function useCaseMessages({
  draft,
  checking,
  error,
  sent,
  variables,
}: {
  draft: CaseDraft;
  /** Whether the form's own checks are shown. */
  checking: boolean;
  /** The last save's failure, and the draft it sent. */
  error: unknown;
  sent: CaseDraft | undefined;
  /** The project's variables, once read (only their names are used). */
  variables: { name: string }[] | undefined;
}) {
  const problems = useMemo(() => (checking ? caseOfDraft(draft).problems : new Map()), [checking, draft]);
  const refused = useMemo(
    () => (error && sent ? violationMessages(fieldViolationsOf(error), sent) : undefined),
    [error, sent],
  );
  const warnings = useMemo(
    () =>
      referenceWarnings(
        draft,
        variables?.map((variable) => variable.name),
      ),
    [draft, variables],
  );
  // The catalog's errors stay at the fields still holding what it refused.
  const stillRefused = useMemo(
    () => (refused && sent ? stillAtSentValues(refused.fields, sent, draft) : new Map()),
    [refused, sent, draft],
  );
  const errors: FieldMessages = new Map([...stillRefused, ...problems]);
  const said = (field: string): Said => ({ error: errors.get(field), warning: warnings.get(field) });
  const steps: StepMessages = {
    said: (stepKey: string, field: string) => said(`${stepKey}:${field}`),
    attention: (stepKey: string, prefix: string) =>
      [...errors.keys(), ...warnings.keys()].some((field) => field.startsWith(`${stepKey}:${prefix}`)),
  };
  // What the catalog said that belongs to no field: a refusal (role, a deleted case) or a failure.
  // A conflict has its own notice and dialog.
  const other =
    error &&
    !editConflictOf(error) &&
    (fieldViolationsOf(error).length === 0 || (refused?.unplaced.length ?? 0) > 0)
      ? [messageOf(error), ...(refused?.unplaced ?? [])].join(" ")
      : undefined;
  return { problems, errors, said, steps, other };
}
