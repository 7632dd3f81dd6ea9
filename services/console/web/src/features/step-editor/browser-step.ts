// The browser kind of step in the editor (proto/testrun/catalog/v1/step.proto, BrowserStep): one
// action on the test's page, the element it acts on (a Locator), the values the action needs and
// the step's timeout. The draft keeps every action's texts while another action is chosen, so
// switching back and forth loses nothing typed; only the chosen action's fields are sent.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type BrowserExpect,
  BrowserStepSchema,
  ElementState,
  type Locator,
  LocatorSchema,
  type Step,
} from "@testrun/gen/testrun/catalog/v1/step_pb";
import { browserStepText } from "../../browser-step-text.js";
import { addMessage, type FieldMessages, rowField, type StepKindLogic } from "./model.js";

/** The bounds of step.proto the form shows where a person reaches them. */
export const browserBounds = {
  locatorCharacters: 2000,
  nth: 1000,
  urlCharacters: 2048,
  keyCharacters: 100,
  options: 100,
  fillCharacters: 100_000,
  expectedCharacters: 10_000,
  titleCharacters: 1000,
  count: 10_000,
  screenshotNameCharacters: 100,
  ms: 120_000,
} as const;

/** The actions, by their name in BrowserStep's `action` oneof, in the order the form offers them. */
export const browserActions = [
  "goto",
  "click",
  "fill",
  "press",
  "select",
  "check",
  "uncheck",
  "hover",
  "waitFor",
  "expect",
  "screenshot",
] as const;
export type BrowserAction = (typeof browserActions)[number];

export const actionLabels: Record<BrowserAction, string> = {
  goto: "Go to a page",
  click: "Click",
  fill: "Fill in",
  press: "Press a key",
  select: "Select options",
  check: "Check",
  uncheck: "Uncheck",
  hover: "Hover",
  waitFor: "Wait for",
  expect: "Expect",
  screenshot: "Take a screenshot",
};

/** How an element is found, by its name in Locator's `by` oneof. */
export const locatorKinds = ["role", "label", "text", "placeholder", "testId", "css"] as const;
export type LocatorKind = (typeof locatorKinds)[number];

/** What the page checks in an expect step, by its name in BrowserExpect's `check` oneof. */
export const expectChecks = ["visible", "hidden", "text", "value", "count", "url", "title"] as const;
export type ExpectCheck = (typeof expectChecks)[number];

/** The checks about an element (a locator is required); url and title are about the page. */
export const elementChecks: readonly ExpectCheck[] = ["visible", "hidden", "text", "value", "count"];

/** The states an element is waited for, as the form offers them (unset is shown as visible). */
export const elementStates = [
  { state: ElementState.VISIBLE, label: "Visible" },
  { state: ElementState.HIDDEN, label: "Hidden (or absent)" },
  { state: ElementState.ATTACHED, label: "In the page (visible or not)" },
  { state: ElementState.DETACHED, label: "Gone from the page" },
] as const;

/** A locator as typed. */
export interface LocatorDraft {
  by: LocatorKind;
  /** The role, label, text, placeholder, test id or CSS selector. */
  value: string;
  /** With `role`: the accessible name. */
  name: string;
  exact: boolean;
  /** Which match, as typed: "" means exactly one must match. */
  nth: string;
}

/** What the form holds of a browser step: texts as typed, each action's own. */
export interface BrowserDraft {
  action: BrowserAction;
  /** The element of every action that has one. */
  locator: LocatorDraft;
  gotoUrl: string;
  fillValue: string;
  key: string;
  /** press: on the element (else on the page's focused element). */
  pressOnElement: boolean;
  options: string[];
  waitFor: "element" | "url" | "text";
  /** As stored: UNSPECIFIED (visible) stays so until another state is chosen. */
  state: ElementState;
  waitUrl: string;
  waitText: string;
  check: ExpectCheck;
  /** The expected text, value, count, URL pattern or title, as typed. */
  expected: string;
  screenshotName: string;
  fullPage: boolean;
  /** Milliseconds as typed; empty means the default (10000). */
  timeoutMs: string;
}

const emptyLocator = (): LocatorDraft => ({ by: "role", value: "", name: "", exact: false, nth: "" });

function empty(): BrowserDraft {
  return {
    action: "goto",
    locator: emptyLocator(),
    gotoUrl: "/",
    fillValue: "",
    key: "",
    pressOnElement: false,
    options: [""],
    waitFor: "element",
    state: ElementState.UNSPECIFIED,
    waitUrl: "",
    waitText: "",
    check: "visible",
    expected: "",
    screenshotName: "",
    fullPage: false,
    timeoutMs: "",
  };
}

/** Whether the action, as drafted, acts on an element. */
export function usesLocator(draft: BrowserDraft): boolean {
  switch (draft.action) {
    case "goto":
    case "screenshot":
      return false;
    case "press":
      return draft.pressOnElement;
    case "waitFor":
      return draft.waitFor === "element";
    case "expect":
      return elementChecks.includes(draft.check);
    default:
      return true;
  }
}

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

function fromStep(kind: Step["kind"]): BrowserDraft | undefined {
  if (kind.case !== "browser") return undefined;
  const step = kind.value;
  const draft = empty();
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

function toStep(draft: BrowserDraft, problems: FieldMessages, at: (name: string) => string): Step["kind"] {
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

/** The form's field for an action message the catalog names as a whole (`.goto`: no URL). */
const wholeAction: Record<string, string> = {
  goto: "goto.url",
  fill: "locator.value",
  click: "locator.value",
  check: "locator.value",
  uncheck: "locator.value",
  hover: "locator.value",
  press: "press.key",
  select: "select.options",
  wait_for: "waitFor.mode",
  expect: "expect.check",
  screenshot: "screenshot.name",
};
/** The form's field of each field the catalog names inside an action (proto names). */
const actionFields: Record<string, Record<string, string>> = {
  goto: { url: "goto.url" },
  fill: { value: "fill.value" },
  press: { key: "press.key" },
  select: { options: "select.options" },
  wait_for: { state: "waitFor.state", url: "waitFor.url", text: "waitFor.text" },
  expect: {
    visible: "expect.check",
    hidden: "expect.check",
    text: "expect.expected",
    value: "expect.expected",
    count: "expect.expected",
    url: "expect.expected",
    title: "expect.expected",
  },
  screenshot: { name: "screenshot.name", full_page: "screenshot.fullPage" },
};
const locatorFields: Record<string, string> = {
  role: "locator.value",
  label: "locator.value",
  text: "locator.value",
  placeholder: "locator.value",
  test_id: "locator.value",
  css: "locator.value",
  name: "locator.name",
  exact: "locator.exact",
  nth: "locator.nth",
};

/**
 * The catalog's paths after `steps[i].browser`: `` (no action), `.timeout_ms`, `.click`,
 * `.click.locator`, `.click.locator.role`, `.wait_for.state`, `.select.options[2]`, …
 */
function fieldOf(rest: string): { field: string; prefix?: string } | undefined {
  if (rest === "") return { field: "action" };
  if (rest === ".timeout_ms") return { field: "timeoutMs" };
  const match = /^\.([a-z_]+)(?:\.([a-z_]+)(?:\[(\d+)\]|\.([a-z_]+))?)?$/.exec(rest);
  if (!match) return undefined;
  const [, action = "", part, index, inLocator] = match;
  const whole = wholeAction[action];
  if (!whole) return undefined;
  if (part === undefined) return { field: whole };
  if (part === "locator") {
    if (index !== undefined) return undefined;
    if (inLocator === undefined) return { field: "locator.value" };
    const field = locatorFields[inLocator];
    return field ? { field } : undefined;
  }
  if (inLocator !== undefined) return undefined;
  const field = actionFields[action]?.[part];
  if (!field) return undefined;
  if (index !== undefined)
    return field === "select.options" ? { field: rowField(field, Number(index)) } : undefined;
  return { field };
}

/** What a field of the form holds in the draft (`locator.value`, `select.options#1`…). */
function valueAt(field: string, draft: BrowserDraft): unknown {
  const [place = "", row] = field.split("#");
  const values: Record<string, unknown> = {
    action: draft.action,
    timeoutMs: draft.timeoutMs,
    // The kind of locator is part of what was sent: a text refused as a role is fine as a label.
    "locator.value": [draft.locator.by, draft.locator.value],
    "locator.name": draft.locator.name,
    "locator.exact": draft.locator.exact,
    "locator.nth": draft.locator.nth,
    "goto.url": draft.gotoUrl,
    "fill.value": draft.fillValue,
    "press.key": draft.key,
    "select.options": draft.options,
    "waitFor.mode": draft.waitFor,
    "waitFor.state": draft.state,
    "waitFor.url": draft.waitUrl,
    "waitFor.text": draft.waitText,
    "expect.check": draft.check,
    "expect.expected": [draft.check, draft.expected],
    "screenshot.name": draft.screenshotName,
    "screenshot.fullPage": draft.fullPage,
  };
  const whole = values[place];
  return row === undefined ? whole : Array.isArray(whole) ? whole[Number(row)] : undefined;
}

export const browserStep: StepKindLogic<BrowserDraft> = {
  label: "Browser",
  empty,
  fromStep,
  toStep,
  summary,
  interpolated,
  // Browser steps save nothing: later steps use what HTTP steps saved and the variables.
  saves: () => [],
  fieldOf,
  valueAt,
};
