// The browser kind of step's logic in the editor (StepKindLogic, model.ts): its draft
// (browser-draft.ts), read from and written to the catalog's message (browser-convert.ts), said in
// one line, its `{{NAME}}` texts, and where the catalog's messages about it belong (browser-paths.ts).
import { browserStepText } from "../../browser-step-text.js";
import { fromStep, toStep } from "./browser-convert.js";
import { type BrowserDraft, emptyBrowser, usesLocator } from "./browser-draft.js";
import { fieldOf, valueAt } from "./browser-paths.js";
import { rowField, type StepKindLogic } from "./model.js";

/**
 * One line, as the test case page says the step (browser-step-text.ts) with its lines after "·":
 * "click getByRole('button', { name: 'Sign in' })", "fill getByLabel('Email') · Types “{{EMAIL}}”".
 */
function summary(draft: BrowserDraft): string {
  const kind = toStep(draft, new Map(), (name) => name);
  if (kind.case !== "browser") return "";
  const { action, target, lines } = browserStepText(kind.value);
  return [target === undefined ? action : `${action} ${target}`, ...lines].join(" · ");
}

/** What the executor interpolates: every string of the chosen action but the screenshot's name. */
function interpolated(draft: BrowserDraft): { field: string; text: string }[] {
  const texts: { field: string; text: string }[] = [];
  if (usesLocator(draft)) {
    texts.push({ field: "locator.value", text: draft.locator.value });
    if (draft.locator.by === "role") texts.push({ field: "locator.name", text: draft.locator.name });
  }
  switch (draft.action) {
    case "goto":
      texts.push({ field: "goto.url", text: draft.gotoUrl });
      break;
    case "fill":
      texts.push({ field: "fill.value", text: draft.fillValue });
      break;
    case "press":
      texts.push({ field: "press.key", text: draft.key });
      break;
    case "select":
      draft.options.forEach((text, index) => {
        texts.push({ field: rowField("select.options", index), text });
      });
      break;
    case "waitFor":
      if (draft.waitFor === "url") texts.push({ field: "waitFor.url", text: draft.waitUrl });
      if (draft.waitFor === "text") texts.push({ field: "waitFor.text", text: draft.waitText });
      break;
    case "expect":
      if (draft.check !== "visible" && draft.check !== "hidden" && draft.check !== "count")
        texts.push({ field: "expect.expected", text: draft.expected });
      break;
  }
  return texts;
}

export const browserStep: StepKindLogic<BrowserDraft> = {
  label: "Browser",
  empty: emptyBrowser,
  fromStep,
  toStep,
  summary,
  interpolated,
  // Browser steps save nothing: later steps use what HTTP steps saved and the variables.
  saves: () => [],
  fieldOf,
  valueAt,
};
