// Where the catalog's messages about a browser step belong in the form: its field paths
// (`steps[i].browser.click.locator.role`) as the form's fields, and what each field holds, so a
// refusal stays at a field only while it still holds what was refused.
import type { BrowserDraft } from "./browser-draft.js";
import { rowField } from "./model.js";

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
export function fieldOf(rest: string): { field: string; prefix?: string } | undefined {
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
export function valueAt(field: string, draft: BrowserDraft): unknown {
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
