import { ariaRoles, browserStepBounds as bounds } from "@testrun/content-file";
import {
  type BrowserExpect,
  type BrowserStep,
  type BrowserWaitFor,
  ElementState,
  type Locator,
} from "@testrun/gen/testrun/catalog/v1/step_pb";
import type { Violations } from "./errors.js";
import { checkMs, codePoints, hasControlCharacters } from "./validate.js";

// Validation of browser steps on write: the rules of BrowserStep, Locator and the action messages
// in proto/testrun/catalog/v1/step.proto. Paths use the proto's field names
// (`steps[2].browser.click.locator.role`, `steps[0].browser.wait_for.state`).

/** A `{{NAME}}` reference: its value, known only when the step runs, decides what the text is. */
const variableReference = /\{\{[A-Za-z_][A-Za-z0-9_]{0,63}\}\}/;

const roles: ReadonlySet<string> = new Set(ariaRoles);
const screenshotNamePattern = new RegExp(`^[A-Za-z0-9 ._-]{1,${bounds.screenshotNameCharacters}}$`);
/** The `by` of a Locator and the actions of a BrowserStep, by their proto field names. */
const locatorKinds = "role, label, text, placeholder, test_id or css";
const actionNames = "goto, click, fill, press, select, check, uncheck, hover, wait_for, expect, screenshot";

/** A oneof case (`waitFor`, `testId`) as its proto field is named in paths (`wait_for`, `test_id`). */
const protoName = (localName: string) => localName.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** Text of at most `max` characters; whether it is. */
function checkLength(text: string, max: number, field: string, violations: Violations): boolean {
  if (codePoints(text) <= max) return true;
  violations.add(field, `must be at most ${max} characters`);
  return false;
}

/**
 * A screenshot's name, unique ignoring letter case within the test case (screenshots are stored
 * and downloaded as files by this name). `seen` maps the names of earlier screenshots to their path.
 */
function checkScreenshotName(name: string, field: string, violations: Violations, seen: Map<string, string>) {
  if (!screenshotNamePattern.test(name)) {
    const rule = `must be 1 to ${bounds.screenshotNameCharacters} characters of letters, digits, space, -, _ and .`;
    violations.add(field, name.includes("{{") ? `${rule} ({{NAME}} is not allowed in a name)` : rule);
    return;
  }
  const key = name.toLowerCase();
  const earlier = seen.get(key);
  if (earlier === undefined) seen.set(key, field);
  else
    violations.add(
      field,
      `"${name}" is already the name of the screenshot at ${earlier}: each screenshot of a test case needs its own name (ignoring letter case)`,
    );
}

/** An ARIA role, unless a variable gives it (the executor checks what the variable holds). */
function checkRole(role: string, field: string, violations: Violations): void {
  if (roles.has(role) || variableReference.test(role)) return;
  const lower = role.toLowerCase();
  violations.add(
    field,
    roles.has(lower)
      ? `"${role}" is not an ARIA role: roles are lower case ("${lower}")`
      : `"${role}" is not an ARIA role Playwright's getByRole knows (button, link, textbox, checkbox, heading, …)`,
  );
}

/** An element's Locator; `required` false for BrowserPress, where it may be absent. */
function checkLocator(
  locator: Locator | undefined,
  field: string,
  violations: Violations,
  required = true,
): void {
  if (!locator) {
    if (required) violations.add(field, `is required: the element, found by ${locatorKinds}`);
    return;
  }
  const { by } = locator;
  if (by.case === undefined) violations.add(field, `needs one of ${locatorKinds}`);
  else if (by.value === "") violations.add(`${field}.${protoName(by.case)}`, "must not be empty");
  else if (
    checkLength(by.value, bounds.locatorCharacters, `${field}.${protoName(by.case)}`, violations) &&
    by.case === "role"
  )
    checkRole(by.value, `${field}.role`, violations);
  if (locator.name !== "" && by.case !== undefined && by.case !== "role")
    violations.add(
      `${field}.name`,
      `is for role locators only (the accessible name of the element with that role); a ${protoName(by.case)} locator matches its own text`,
    );
  else checkLength(locator.name, bounds.locatorCharacters, `${field}.name`, violations);
  if (locator.nth < 0 || locator.nth > bounds.nth)
    violations.add(
      `${field}.nth`,
      `must be 0 (exactly one element must match) or 1 to ${bounds.nth} (the first, second, … of those that match)`,
    );
}

/** BrowserGoto.url: a path under the base URL, an absolute http(s) URL, or one a variable gives. */
function checkGotoUrl(url: string, field: string, violations: Violations): void {
  const rule =
    'a path starting with "/" (under the environment\'s base URL) or an absolute http:// or https:// URL';
  if (url === "") violations.add(field, `is required: ${rule}`);
  else if (!checkLength(url, bounds.urlCharacters, field, violations)) return;
  else if (/\s/.test(url) || hasControlCharacters(url))
    violations.add(field, "must not contain spaces or control characters");
  else if (url.startsWith("/") || new RegExp(`^${variableReference.source}`).test(url)) return;
  else if (!/^https?:\/\//i.test(url)) violations.add(field, `must be ${rule}`);
  else if (!url.includes("{{") && !URL.parse(url)?.hostname)
    violations.add(field, `must be ${rule}: this one has no host`);
}

/** A URL pattern of wait_for and expect (Playwright's glob, or a path under the base URL). */
function checkUrlPattern(pattern: string, field: string, violations: Violations): void {
  if (!checkLength(pattern, bounds.urlCharacters, field, violations)) return;
  if (/\s/.test(pattern) || hasControlCharacters(pattern))
    violations.add(field, "must not contain spaces or control characters");
}

const stateNames =
  "ELEMENT_STATE_VISIBLE, ELEMENT_STATE_HIDDEN, ELEMENT_STATE_ATTACHED or ELEMENT_STATE_DETACHED";

function checkWaitFor(waitFor: BrowserWaitFor, field: string, violations: Violations): void {
  const given = [
    waitFor.locator !== undefined && "locator",
    waitFor.url !== "" && "url",
    waitFor.text !== "" && "text",
  ].filter((name) => name !== false);
  const [first, second] = given;
  if (first === undefined) violations.add(field, "needs what to wait for: one of locator, url, text");
  else if (second !== undefined)
    violations.add(
      `${field}.${second}`,
      `cannot be set together with ${first}: a wait_for waits for one thing`,
    );
  if (waitFor.locator) checkLocator(waitFor.locator, `${field}.locator`, violations);
  if (!(waitFor.state in ElementState)) violations.add(`${field}.state`, `must be ${stateNames}`);
  else if (waitFor.state !== ElementState.UNSPECIFIED && !waitFor.locator)
    violations.add(`${field}.state`, "is for waiting on a locator only");
  if (waitFor.url !== "") checkUrlPattern(waitFor.url, `${field}.url`, violations);
}

/** The checks of BrowserExpect that look at element(s), and so need a locator. */
const elementChecks = new Set(["visible", "hidden", "text", "value", "count"]);

function checkExpect(expect: BrowserExpect, field: string, violations: Violations): void {
  const { check } = expect;
  if (check.case === undefined) {
    violations.add(field, "needs one check: visible, hidden, text, value, count, url or title");
    if (expect.locator) checkLocator(expect.locator, `${field}.locator`, violations);
    return;
  }
  const at = `${field}.${check.case}`;
  if (elementChecks.has(check.case)) checkLocator(expect.locator, `${field}.locator`, violations);
  else if (expect.locator)
    violations.add(
      `${field}.locator`,
      `is not allowed with ${check.case}: that checks the page, not an element`,
    );
  switch (check.case) {
    case "visible":
    case "hidden":
      if (!check.value)
        violations.add(
          at,
          `must be true (to check the opposite, use ${check.case === "visible" ? "hidden" : "visible"}: true)`,
        );
      break;
    case "text":
      if (check.value === "") violations.add(at, "must not be empty (every element's text contains it)");
      else checkLength(check.value, bounds.expectedCharacters, at, violations);
      break;
    case "value":
      checkLength(check.value, bounds.expectedCharacters, at, violations);
      break;
    case "count":
      if (check.value < 0 || check.value > bounds.count) violations.add(at, `must be 0 to ${bounds.count}`);
      break;
    case "url":
      if (check.value === "") violations.add(at, "must not be empty");
      else checkUrlPattern(check.value, at, violations);
      break;
    case "title":
      if (check.value === "") violations.add(at, "must not be empty (every title contains it)");
      else checkLength(check.value, bounds.titleCharacters, at, violations);
      break;
  }
}

/**
 * Checks a browser step at `field` (`steps[2].browser`). `screenshots` carries the names of the
 * test case's screenshots from one step to the next.
 */
export function checkBrowser(
  step: BrowserStep,
  field: string,
  violations: Violations,
  screenshots: Map<string, string>,
): void {
  const { action } = step;
  const at = action.case === undefined ? field : `${field}.${protoName(action.case)}`;
  switch (action.case) {
    case "goto":
      checkGotoUrl(action.value.url, `${at}.url`, violations);
      break;
    case "click":
    case "check":
    case "uncheck":
    case "hover":
      checkLocator(action.value.locator, `${at}.locator`, violations);
      break;
    case "fill":
      checkLocator(action.value.locator, `${at}.locator`, violations);
      checkLength(action.value.value, bounds.fillCharacters, `${at}.value`, violations);
      break;
    case "press":
      checkLocator(action.value.locator, `${at}.locator`, violations, false);
      if (action.value.key === "")
        violations.add(
          `${at}.key`,
          'is required: a key as Playwright names it ("Enter", "Tab", "Control+A", …)',
        );
      else checkLength(action.value.key, bounds.keyCharacters, `${at}.key`, violations);
      break;
    case "select": {
      checkLocator(action.value.locator, `${at}.locator`, violations);
      const count = action.value.options.length;
      if (count < 1 || count > bounds.options)
        violations.add(
          `${at}.options`,
          `must hold 1 to ${bounds.options} options, each a value or label (got ${count})`,
        );
      break;
    }
    case "waitFor":
      checkWaitFor(action.value, at, violations);
      break;
    case "expect":
      checkExpect(action.value, at, violations);
      break;
    case "screenshot":
      checkScreenshotName(action.value.name, `${at}.name`, violations, screenshots);
      break;
    default:
      violations.add(field, `needs an action: one of ${actionNames}`);
  }
  checkMs(step.timeoutMs, `${field}.timeout_ms`, violations, "the default, 10000");
}
