// `{{NAME}}` references checked as they are typed, as the executor will resolve them
// (proto/testrun/catalog/v1/step.proto, "Interpolation"): a name is a value saved by an EARLIER
// step of the same test, else a project variable, compared exactly. An unknown name is a warning,
// not an error: the variable may be added before the test runs.
import { type CaseDraft, logicOf } from "../step-editor/kinds.js";
import { addMessage, type FieldMessages, stepField } from "../step-editor/model.js";

/** The executor's placeholder (services/executor/src/steps/variables.ts). */
const placeholder = /\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g;
/** Something that looks meant as a placeholder but is not one (`{{ token }}`, `{{user-id}}`). */
const lookalike = /\{\{[^{}]*\}\}/g;

/** The names a text refers to, in order, each once. */
export function referencesIn(text: string): string[] {
  return [...new Set([...text.matchAll(placeholder)].map((match) => match[1] ?? ""))];
}

/** `{{…}}` in a text that the executor sends as written, because it is no reference. */
export function lookalikesIn(text: string): string[] {
  return [...new Set([...text.matchAll(lookalike)].map((match) => match[0]))].filter(
    (found) => referencesIn(found).length === 0,
  );
}

/**
 * A warning for each field naming something no earlier step saves and no project variable has,
 * saying why (saved only later, a letter case off, or unknown). Without the project's variable
 * names (not read yet) only the lookalikes are said.
 */
export function referenceWarnings(draft: CaseDraft, variables: readonly string[] | undefined): FieldMessages {
  const warnings: FieldMessages = new Map();
  const variableNames = new Set(variables ?? []);
  const savedBy = new Map<string, number>();
  draft.steps.forEach((step, index) => {
    for (const name of logicOf(step).saves(step.draft)) if (!savedBy.has(name)) savedBy.set(name, index);
  });
  draft.steps.forEach((step, index) => {
    const known = new Set(variableNames);
    for (const earlier of draft.steps.slice(0, index))
      for (const name of logicOf(earlier).saves(earlier.draft)) known.add(name);
    for (const { field, text } of logicOf(step).interpolated(step.draft)) {
      const at = stepField(step.key, field);
      for (const found of lookalikesIn(text))
        addMessage(
          warnings,
          at,
          `${found} is sent as written: a reference is {{NAME}}, letters, digits and _ without spaces.`,
        );
      if (variables === undefined) continue;
      for (const name of referencesIn(text)) {
        if (known.has(name)) continue;
        addMessage(warnings, at, unknownName(name, index, savedBy, known));
      }
    }
  });
  return warnings;
}

function unknownName(name: string, index: number, savedBy: Map<string, number>, known: Set<string>): string {
  const reference = `{{${name}}}`;
  const saver = savedBy.get(name);
  if (saver === index)
    return `${reference} is saved by this step, after its request: only later steps can use it.`;
  if (saver !== undefined)
    return `${reference} is saved by step ${saver + 1}, which runs after this one: move that step up.`;
  const otherCase = [...known].find((candidate) => candidate.toLowerCase() === name.toLowerCase());
  if (otherCase) return `${reference} is unknown (names are case-sensitive): did you mean {{${otherCase}}}?`;
  return `${reference} is not a project variable or a value saved by an earlier step: the step fails unless a variable named ${name} is added before the test runs.`;
}
