// The words of the browser step's form: what each action does, how each kind of locator is filled
// in (with examples: a locator is only as good as what it names), the checks of an expectation.
import type { ReactNode } from "react";
import { type BrowserAction, browserBounds, type ExpectCheck, type LocatorKind } from "./browser-draft";

export const n = (value: number) => value.toLocaleString("en");

/** What each action does, under the action's choice. */
export const actionHints: Record<BrowserAction, string> = {
  goto: "Loads a page and waits for its load event. The test's first browser step opens the browser.",
  click: "Clicks the element once it is visible, enabled and still.",
  fill: "Types a value into an input, replacing what it held.",
  press: "Presses a key on the element, or on whatever has focus.",
  select: "Chooses options of a <select>.",
  check: "Ticks a checkbox or radio button (passes if it already is).",
  uncheck: "Unticks a checkbox (passes if it already is).",
  hover: "Moves the mouse over the element (menus that open on hover).",
  waitFor: "Waits until an element reaches a state, the URL matches, or a text appears.",
  expect: "Checks the page, retrying until it holds or the step times out.",
  screenshot: "Saves a picture of the page with the test's results.",
};

export const locatorLabels: Record<
  LocatorKind,
  { choice: string; label: string; placeholder: string; hint: ReactNode }
> = {
  role: {
    choice: "Role and name",
    label: "Role",
    placeholder: "button",
    hint: (
      <>
        An ARIA role, usually with its name: role <code>button</code> + name <code>Sign in</code>, role{" "}
        <code>link</code> + <code>Pricing</code>, role <code>textbox</code> + <code>Email</code>, role{" "}
        <code>heading</code> + <code>Welcome</code>.
      </>
    ),
  },
  label: {
    choice: "Label",
    label: "Label text",
    placeholder: "Email",
    hint: (
      <>
        The text of the field's <code>&lt;label&gt;</code> or <code>aria-label</code>, e.g. <code>Email</code>{" "}
        or <code>Password</code>.
      </>
    ),
  },
  text: {
    choice: "Text shown",
    label: "Text shown",
    placeholder: "Welcome back",
    hint: (
      <>
        Text the element shows, e.g. <code>Welcome back</code> or <code>Forgot your password?</code>.
      </>
    ),
  },
  placeholder: {
    choice: "Placeholder",
    label: "Placeholder",
    placeholder: "you@example.com",
    hint: (
      <>
        The input's placeholder, e.g. <code>you@example.com</code> or <code>Search…</code>.
      </>
    ),
  },
  testId: {
    choice: "Test id",
    label: "Test id",
    placeholder: "greeting",
    hint: (
      <>
        Its <code>data-testid</code> attribute: <code>greeting</code> finds{" "}
        <code>&lt;p data-testid="greeting"&gt;</code>.
      </>
    ),
  },
  css: {
    choice: "CSS selector",
    label: "CSS selector",
    placeholder: "form#login button[type=submit]",
    hint: (
      <>
        E.g. <code>form#login button[type=submit]</code> or <code>.alert-error</code>. A role or a label is
        sturdier: it survives a redesign.
      </>
    ),
  },
};

/** Roles people use most, offered as they type (any role Playwright's getByRole knows is taken). */
export const commonRoles = [
  "button",
  "link",
  "textbox",
  "checkbox",
  "radio",
  "combobox",
  "heading",
  "listbox",
  "option",
  "menuitem",
  "tab",
  "dialog",
  "alert",
  "img",
  "navigation",
  "row",
  "cell",
  "switch",
  "searchbox",
];

export const checkLabels: Record<ExpectCheck, string> = {
  visible: "The element is visible",
  hidden: "The element is hidden (or absent)",
  text: "The element's text contains",
  value: "The input's value equals",
  count: "How many elements match",
  url: "The page's URL matches",
  title: "The page's title contains",
};

export const urlPatternHint = (
  <>
    A path (<code>/account</code>, appended to the environment's base URL) or an absolute URL; <code>*</code>{" "}
    matches within a path segment, <code>**</code> across them: <code>/orders/*</code>.
  </>
);

export const expectedFields: Partial<
  Record<ExpectCheck, { label: string; placeholder: string; hint: ReactNode }>
> = {
  text: {
    label: "Text it contains",
    placeholder: "Hello, {{DEMO_USER}}",
    hint: `Case-sensitive; at most ${n(browserBounds.expectedCharacters)} characters. May use {{NAME}}.`,
  },
  value: {
    label: "Value",
    placeholder: "{{DEMO_USER}}",
    hint: `The input's whole value; at most ${n(browserBounds.expectedCharacters)} characters. May use {{NAME}}.`,
  },
  count: {
    label: "Count",
    placeholder: "3",
    hint: `Exactly this many elements match (0 to ${n(browserBounds.count)}).`,
  },
  url: { label: "URL pattern", placeholder: "/account", hint: urlPatternHint },
  title: {
    label: "Title contains",
    placeholder: "Dashboard",
    hint: `Case-sensitive; at most ${n(browserBounds.titleCharacters)} characters.`,
  },
};
