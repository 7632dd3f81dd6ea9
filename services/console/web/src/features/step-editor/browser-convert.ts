// A browser step between the catalog's message and the form's draft: read whole, and written back
// with what stops it being sent (a number that is not one, a missing locator) at the form's fields.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type BrowserExpect,
  BrowserStepSchema,
  type Locator,
  LocatorSchema,
  type Step,
} from "@testrun/gen/testrun/catalog/v1/step_pb";
import {
  type BrowserDraft,
  browserBounds,
  elementChecks,
  emptyBrowser,
  emptyLocator,
  type LocatorDraft,
} from "./browser-draft.js";
import { addMessage, type FieldMessages } from "./model.js";

const locatorDraftOf = (locator: Locator | undefined): LocatorDraft =>
  locator
    ? {
        by: locator.by.case ?? "role",
        value: locator.by.value ?? "",
        name: locator.name,
        exact: locator.exact,
        nth: locator.nth === 0 ? "" : String(locator.nth),
      }
    : emptyLocator();

export function fromStep(kind: Step["kind"]): BrowserDraft | undefined {
  if (kind.case !== "browser") return undefined;
  const step = kind.value;
  const draft = emptyBrowser();
  draft.timeoutMs = step.timeoutMs === 0 ? "" : String(step.timeoutMs);
  const action = step.action;
  if (action.case === undefined) return draft;
  draft.action = action.case;
  switch (action.case) {
    case "goto":
      draft.gotoUrl = action.value.url;
      break;
    case "click":
    case "check":
    case "uncheck":
    case "hover":
      draft.locator = locatorDraftOf(action.value.locator);
      break;
    case "fill":
      draft.locator = locatorDraftOf(action.value.locator);
      draft.fillValue = action.value.value;
      break;
    case "press":
      draft.pressOnElement = action.value.locator !== undefined;
      draft.locator = locatorDraftOf(action.value.locator);
      draft.key = action.value.key;
      break;
    case "select":
      draft.locator = locatorDraftOf(action.value.locator);
      draft.options = [...action.value.options];
      break;
    case "waitFor": {
      const wait = action.value;
      draft.locator = locatorDraftOf(wait.locator);
      draft.state = wait.state;
      draft.waitUrl = wait.url;
      draft.waitText = wait.text;
      draft.waitFor = wait.locator
        ? "element"
        : wait.url !== ""
          ? "url"
          : wait.text !== ""
            ? "text"
            : "element";
      break;
    }
    case "expect": {
      const check = action.value.check;
      draft.locator = locatorDraftOf(action.value.locator);
      draft.check = check.case ?? "visible";
      if (check.case === "count") draft.expected = String(check.value);
      else if (typeof check.value === "string") draft.expected = check.value;
      break;
    }
    case "screenshot":
      draft.screenshotName = action.value.name;
      draft.fullPage = action.value.fullPage;
      break;
  }
  return draft;
}

/** A whole number as typed, within `max`; "" is 0. What is not one is a problem at the field. */
function parseWhole(text: string, max: number, field: string, problems: FieldMessages, what: string): number {
  const trimmed = text.trim();
  if (trimmed === "") return 0;
  if (!/^\d+$/.test(trimmed)) {
    addMessage(problems, field, `Must be a whole number${what}.`);
    return 0;
  }
  const n = Number(trimmed);
  // Past int32 the message could not carry it; the catalog words the bound for the rest.
  if (n > 2_147_483_647) {
    addMessage(problems, field, `Must be at most ${max.toLocaleString("en")}.`);
    return 0;
  }
  return n;
}

function locatorOf(draft: LocatorDraft, problems: FieldMessages, at: (name: string) => string): Locator {
  return create(LocatorSchema, {
    by: { case: draft.by, value: draft.value },
    name: draft.name,
    exact: draft.exact,
    nth: parseWhole(
      draft.nth,
      browserBounds.nth,
      at("locator.nth"),
      problems,
      ": 1 for the first match, 2 for the second…",
    ),
  });
}

function expectOf(
  draft: BrowserDraft,
  problems: FieldMessages,
  at: (name: string) => string,
): BrowserExpect["check"] {
  switch (draft.check) {
    case "visible":
    case "hidden":
      return { case: draft.check, value: true };
    case "count":
      if (draft.expected.trim() === "") {
        addMessage(
          problems,
          at("expect.expected"),
          "Enter how many elements must match, e.g. 3 (0 for none).",
        );
        return { case: "count", value: 0 };
      }
      return {
        case: "count",
        value: parseWhole(
          draft.expected,
          browserBounds.count,
          at("expect.expected"),
          problems,
          " of elements, e.g. 3",
        ),
      };
    default:
      return { case: draft.check, value: draft.expected };
  }
}

export function toStep(
  draft: BrowserDraft,
  problems: FieldMessages,
  at: (name: string) => string,
): Step["kind"] {
  const locator = () => locatorOf(draft.locator, problems, at);
  let action: MessageInitShape<typeof BrowserStepSchema>["action"];
  switch (draft.action) {
    case "goto":
      action = { case: "goto", value: { url: draft.gotoUrl } };
      break;
    case "click":
    case "check":
    case "uncheck":
    case "hover":
      action = { case: draft.action, value: { locator: locator() } };
      break;
    case "fill":
      action = { case: "fill", value: { locator: locator(), value: draft.fillValue } };
      break;
    case "press":
      action = {
        case: "press",
        value: { key: draft.key, ...(draft.pressOnElement && { locator: locator() }) },
      };
      break;
    case "select":
      action = { case: "select", value: { locator: locator(), options: [...draft.options] } };
      break;
    case "waitFor":
      action = {
        case: "waitFor",
        value:
          draft.waitFor === "element"
            ? { locator: locator(), state: draft.state }
            : draft.waitFor === "url"
              ? { url: draft.waitUrl }
              : { text: draft.waitText },
      };
      break;
    case "expect":
      action = {
        case: "expect",
        value: {
          ...(elementChecks.includes(draft.check) && { locator: locator() }),
          check: expectOf(draft, problems, at),
        },
      };
      break;
    case "screenshot":
      action = { case: "screenshot", value: { name: draft.screenshotName, fullPage: draft.fullPage } };
      break;
  }
  const timeoutMs = parseWhole(
    draft.timeoutMs,
    browserBounds.ms,
    at("timeoutMs"),
    problems,
    " of milliseconds, e.g. 5000",
  );
  return { case: "browser", value: create(BrowserStepSchema, { action, timeoutMs }) };
}
