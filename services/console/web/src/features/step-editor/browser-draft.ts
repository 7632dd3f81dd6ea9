// The browser kind of step as the editor's form holds it (proto/testrun/catalog/v1/step.proto,
// BrowserStep): one action on the test's page, the element it acts on (a Locator), the values the
// action needs and the step's timeout. The draft keeps every action's texts while another action
// is chosen, so switching back and forth loses nothing typed; only the chosen action's are sent.
import { browserStepBounds } from "@testrun/content-file";
import { ElementState } from "@testrun/gen/testrun/catalog/v1/step_pb";

/** The bounds of step.proto the form shows where a person reaches them: the catalog's own. */
export const browserBounds = browserStepBounds;

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

export const emptyLocator = (): LocatorDraft => ({ by: "role", value: "", name: "", exact: false, nth: "" });

export function emptyBrowser(): BrowserDraft {
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
