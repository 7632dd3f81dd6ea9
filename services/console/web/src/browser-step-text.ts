// A browser step (proto/testrun/catalog/v1/step.proto, BrowserStep) in words people who know
// Playwright read at a glance: the action, what it acts on (a locator written as Playwright code,
// `getByRole('button', { name: 'Sign in' })`), and the rest in short lines. Texts show as stored:
// `{{NAME}}` stays a name, so a variable's value is never part of them.
import { type BrowserStep, ElementState, type Locator } from "@testrun/gen/testrun/catalog/v1/step_pb";

export interface BrowserStepText {
  /** What the step does: "click", "fill", "wait for", "expect URL", … */
  action: string;
  /** What it acts on or checks: a locator as Playwright code, a URL, a key, a name. */
  target?: string;
  /** The rest, a sentence each: "Types “{{EMAIL}}”", "Text contains “Hello”". */
  lines: string[];
}

/** The longest text quoted in full; a longer one (a fill value of 100000 characters) is cut. */
const maxQuoted = 300;

/** Text in quotes, cut after 300 characters saying how long it is. */
export function quoted(text: string): string {
  const characters = [...text];
  if (characters.length <= maxQuoted) return `“${text}”`;
  return `“${characters.slice(0, maxQuoted).join("")}…” (${characters.length} characters)`;
}

/** A JavaScript string literal in single quotes, as Playwright's own code is written. */
const js = (text: string) =>
  `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'").replace(/\n/g, "\\n").replace(/\r/g, "\\r")}'`;

/** A Locator as the Playwright call that finds the same element(s). */
export function locatorCode(locator: Locator | undefined): string {
  if (!locator) return "(no element)";
  const { by, name, exact, nth } = locator;
  const options = (fields: string[]) => (fields.length ? `, { ${fields.join(", ")} }` : "");
  const exactly = exact ? ["exact: true"] : [];
  let code: string;
  switch (by.case) {
    case "role":
      code = `getByRole(${js(by.value)}${options(name ? [`name: ${js(name)}`, ...exactly] : [])})`;
      break;
    case "label":
      code = `getByLabel(${js(by.value)}${options(exactly)})`;
      break;
    case "text":
      code = `getByText(${js(by.value)}${options(exactly)})`;
      break;
    case "placeholder":
      code = `getByPlaceholder(${js(by.value)}${options(exactly)})`;
      break;
    case "testId":
      code = `getByTestId(${js(by.value)})`;
      break;
    case "css":
      code = `locator(${js(by.value)})`;
      break;
    default:
      return "(no element)";
  }
  // The step's nth counts from 1; Playwright's from 0.
  if (nth === 1) return `${code}.first()`;
  if (nth > 1) return `${code}.nth(${nth - 1})`;
  return code;
}

const states: Record<ElementState, string> = {
  [ElementState.UNSPECIFIED]: "visible",
  [ElementState.VISIBLE]: "visible",
  [ElementState.HIDDEN]: "hidden",
  [ElementState.ATTACHED]: "in the page",
  [ElementState.DETACHED]: "gone from the page",
};

/** The step in words (see BrowserStepText). */
export function browserStepText(step: BrowserStep): BrowserStepText {
  const { action } = step;
  switch (action.case) {
    case "goto":
      return { action: "goto", target: action.value.url, lines: [] };
    case "click":
    case "check":
    case "uncheck":
    case "hover":
      return { action: action.case, target: locatorCode(action.value.locator), lines: [] };
    case "fill": {
      const { value } = action.value;
      return {
        action: "fill",
        target: locatorCode(action.value.locator),
        lines: [value === "" ? "Clears it" : `Types ${quoted(value)}`],
      };
    }
    case "press":
      return {
        action: "press",
        target: action.value.key,
        lines: [
          action.value.locator
            ? `On ${locatorCode(action.value.locator)}`
            : "On the element that has the focus",
        ],
      };
    case "select":
      return {
        action: "select",
        target: locatorCode(action.value.locator),
        lines: [`Chooses ${action.value.options.map(quoted).join(", ")}`],
      };
    case "waitFor": {
      const { locator, state, url, text } = action.value;
      if (locator)
        return {
          action: "wait for",
          target: locatorCode(locator),
          lines: [`Until it is ${states[state] ?? "visible"}`],
        };
      if (url) return { action: "wait for URL", target: url, lines: [] };
      return { action: "wait for text", target: text, lines: [] };
    }
    case "expect": {
      const { locator, check } = action.value;
      switch (check.case) {
        case "url":
          return { action: "expect URL", target: check.value, lines: [] };
        case "title":
          return { action: "expect title", lines: [`Contains ${quoted(check.value)}`] };
        case "visible":
          return { action: "expect", target: locatorCode(locator), lines: ["Is visible"] };
        case "hidden":
          return { action: "expect", target: locatorCode(locator), lines: ["Is hidden or absent"] };
        case "text":
          return {
            action: "expect",
            target: locatorCode(locator),
            lines: [`Text contains ${quoted(check.value)}`],
          };
        case "value":
          return {
            action: "expect",
            target: locatorCode(locator),
            lines: [`Value is ${quoted(check.value)}`],
          };
        case "count":
          return {
            action: "expect",
            target: locatorCode(locator),
            lines: [`Matches ${check.value} ${check.value === 1 ? "element" : "elements"}`],
          };
        default:
          return { action: "expect", target: locatorCode(locator), lines: [] };
      }
    }
    case "screenshot":
      return {
        action: "screenshot",
        target: action.value.name,
        lines: [action.value.fullPage ? "Of the whole page" : "Of the visible part of the page"],
      };
    default:
      return { action: "(no action)", lines: [] };
  }
}
