// The browser step kind: one action on the test's page (Playwright driving Chromium), or a check
// of it. Elements are found with Playwright's locators; no step runs script in the page. A failing
// step says which action, which locator (as Playwright code reads: `getByRole('button', { name:
// 'Sign in' })`) and what was found instead, in one line (docs/runs.md, "Browser steps").
import {
  type BrowserExpect,
  type BrowserStep,
  type BrowserWaitFor,
  ElementState,
  type Locator,
} from "@testrun/gen/testrun/catalog/v1/step_pb";
import { errors, type Page, type Locator as PageLocator } from "playwright-core";
import { NotAWebUrl, navigationUrl } from "../browser/chromium-flags.js";
import { maskedScreenshot } from "../browser/mask.js";
import { BrowserLost } from "../browser/pool.js";
import { cannotConnect } from "./http.js";
import type { StepContext, StepKind } from "./kind.js";
import { StepFailure, type StepFailureCause, type Variables } from "./variables.js";
import { clip, durationText, own, Said, say } from "./wording.js";

export const defaultBrowserTimeoutMs = 10_000;

export const browserStepKind: StepKind<"browser"> = {
  async run(step, ctx) {
    if (!ctx.browser) throw new StepFailure(say`this executor runs no browser steps`);
    // Waiting for a browser context counts against the test's deadline only, not the step's timeout.
    // A browser that cannot be started (BrowserUnavailable) is not the test's fault: the test gets
    // no result and is handed back (executor.ts), like one whose browser crashed.
    const page = await ctx.browser.page(ctx.signal);
    const timeoutMs = step.timeoutMs > 0 ? step.timeoutMs : defaultBrowserTimeoutMs;
    const action = actionOf(step, { page, ctx, timeoutMs });
    try {
      await untilAborted(action.run(), ctx.signal);
    } catch (error) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      if (ctx.browser.lost) throw new BrowserLost();
      const why = error instanceof StepFailure ? error.said : describeError(error);
      throw new StepFailure(
        say`${action.describe}: ${why}`,
        error instanceof StepFailure ? error.failureCause : "assertion",
      );
    }
  },
};

interface Scope {
  page: Page;
  ctx: StepContext;
  timeoutMs: number;
}

interface Action {
  /** "click getByRole('button', { name: 'Sign in' })": the start of a failure's summary. */
  describe: Said;
  /** Resolves when the step passed; throws StepFailure (what was found instead) when it failed. */
  run(): Promise<void>;
}

/** Settles with `work`, or rejects as soon as `signal` aborts (the test's deadline, a stop). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  // Whatever the abandoned action ends with later (its context is closed) is not a failure of ours.
  work.catch(() => {});
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function actionOf(step: BrowserStep, scope: Scope): Action {
  const { page, ctx, timeoutMs } = scope;
  const { vars } = ctx;
  const timeout = { timeout: timeoutMs };
  const { action } = step;
  switch (action.case) {
    case "goto": {
      const { url } = action.value;
      return {
        describe: say`goto ${quote(url)}`,
        run: () => goto(page, resolveUrl(vars.interpolate(url), ctx.baseUrl), timeoutMs),
      };
    }
    case "click":
      return onElement(say`click`, action.value.locator, scope, (element) => element.click(timeout));
    case "fill": {
      const { value } = action.value;
      return onElement(say`fill`, action.value.locator, scope, (element) =>
        element.fill(vars.interpolate(value), timeout),
      );
    }
    case "press": {
      const { key, locator } = action.value;
      if (!locator)
        return { describe: say`press ${quote(key)}`, run: () => pressOnPage(page, vars.interpolate(key)) };
      return onElement(say`press ${quote(key)} on`, locator, scope, (element) =>
        element.press(vars.interpolate(key), timeout),
      );
    }
    case "select": {
      return onElement(say`select`, action.value.locator, scope, async (element) => {
        const options = action.value.options.map((option) => vars.interpolate(option));
        await element.selectOption(options, timeout).catch(async (error: unknown) => {
          throw (await missingOption(element, options)) ?? error;
        });
      });
    }
    case "check":
      return onElement(say`check`, action.value.locator, scope, (element) => element.check(timeout));
    case "uncheck":
      return onElement(say`uncheck`, action.value.locator, scope, (element) => element.uncheck(timeout));
    case "hover":
      return onElement(say`hover`, action.value.locator, scope, (element) => element.hover(timeout));
    case "waitFor":
      return waitFor(action.value, scope);
    case "expect":
      return expectation(action.value, scope);
    case "screenshot": {
      const { name, fullPage } = action.value;
      return {
        describe: say`screenshot ${quote(name)}`,
        async run() {
          const png = await maskedScreenshot(page, ctx.vars, { fullPage, timeout: timeoutMs });
          ctx.browser?.keepScreenshot(name, ctx.step, png);
        },
      };
    }
    default:
      return {
        describe: say`browser step`,
        run: () => Promise.reject(new StepFailure(say`no action`)),
      };
  }
}

/**
 * A path (appended to the environment's base URL) or an absolute http(s) URL; the scheme check is
 * the browser's one (chromium-flags.ts, navigationUrl).
 */
function resolveUrl(url: string, baseUrl: string): string {
  if (url.startsWith("/")) return `${baseUrl}${url}`;
  if (!URL.canParse(url))
    throw new StepFailure(say`the URL must start with / or be an absolute http or https URL`);
  try {
    return navigationUrl(url, baseUrl).href;
  } catch (error) {
    if (error instanceof NotAWebUrl) throw new StepFailure(say`only http and https URLs can be opened`);
    throw error;
  }
}

/**
 * Chromium's network errors, by what they mean to the test. Those of the connection stage are one
 * message, as for HTTP steps, so that a failure tells nothing of what lies behind an address.
 */
const connectErrors = new Set([
  "ERR_CONNECTION_REFUSED",
  "ERR_CONNECTION_FAILED",
  "ERR_CONNECTION_TIMED_OUT",
  "ERR_NAME_NOT_RESOLVED",
  "ERR_NAME_RESOLUTION_FAILED",
  "ERR_ADDRESS_UNREACHABLE",
  "ERR_ADDRESS_INVALID",
  "ERR_NETWORK_ACCESS_DENIED",
  "ERR_INTERNET_DISCONNECTED",
  "ERR_TUNNEL_CONNECTION_FAILED",
  "ERR_PROXY_CONNECTION_FAILED",
  "ERR_EMPTY_RESPONSE",
]);

async function goto(page: Page, url: string, timeoutMs: number): Promise<void> {
  try {
    await page.goto(url, { timeout: timeoutMs, waitUntil: "load" });
  } catch (error) {
    if (error instanceof errors.TimeoutError)
      throw new StepFailure(say`the page did not load within ${own(durationText(timeoutMs))}`, "timeout");
    const code = /net::(ERR_[A-Z0-9_]+)/.exec(error instanceof Error ? error.message : "")?.[1];
    if (!code) throw error;
    // Chromium's error codes are its words, not the target's; every one is the network's (the
    // egress proxy's refusals among them: Chromium sees a tunnel that failed, not why).
    if (connectErrors.has(code)) throw new StepFailure(own(cannotConnect), "network");
    if (code === "ERR_CONNECTION_RESET" || code === "ERR_CONNECTION_CLOSED")
      throw new StepFailure(say`connection closed by the server`, "network");
    if (code === "ERR_ABORTED")
      throw new StepFailure(say`the page was not loaded (a download, or it was refused)`, "network");
    if (code.startsWith("ERR_CERT_") || code.startsWith("ERR_SSL_"))
      throw new StepFailure(say`TLS error (net::${own(code)})`, "network");
    throw new StepFailure(say`could not load the page (net::${own(code)})`, "network");
  }
}

async function pressOnPage(page: Page, key: string): Promise<void> {
  await page.keyboard.press(key);
}

/** A locator as Playwright's API builds it, and as a summary writes it. */
export interface Found {
  /** Every element the locator matches (the count, and what a `count` check counts). */
  all: PageLocator;
  /** The one element acted on: `all` itself (strict: exactly one must match) or its nth. */
  one: PageLocator;
  nth: number;
  /** `getByRole('button', { name: 'Sign in' }).nth(1)`: as written in the step, not interpolated. */
  text: Said;
}

/** A string as a JavaScript literal in single quotes, clipped: how Playwright prints locators. */
const jsString = (text: string) => `'${clip(text, 60).replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
/** A value quoted in a summary: as JSON, clipped (a summary is one line of 300 characters). */
const quote = (text: string) => clip(JSON.stringify(text), 80);

/** The locator as Playwright code: the method names are the executor's words, the values the test's. */
export function locatorText(locator: Locator): Said {
  const exact = locator.exact ? say`, { exact: true }` : say``;
  const { by } = locator;
  let text: Said;
  switch (by.case) {
    case "role": {
      const options = locator.name
        ? say`, { name: ${jsString(locator.name)}${locator.exact ? say`, exact: true` : say``} }`
        : say``;
      text = say`getByRole(${jsString(by.value)}${options})`;
      break;
    }
    case "label":
      text = say`getByLabel(${jsString(by.value)}${exact})`;
      break;
    case "text":
      text = say`getByText(${jsString(by.value)}${exact})`;
      break;
    case "placeholder":
      text = say`getByPlaceholder(${jsString(by.value)}${exact})`;
      break;
    case "testId":
      text = say`getByTestId(${jsString(by.value)})`;
      break;
    case "css":
      text = say`locator(${jsString(by.value)})`;
      break;
    default:
      text = say`(no locator)`;
  }
  if (locator.nth === 1) return say`${text}.first()`;
  if (locator.nth > 1) return say`${text}.nth(${own(locator.nth - 1)})`;
  return text;
}

export function locate(page: Page, locator: Locator, vars: Variables): Found {
  const { by, exact } = locator;
  const value = vars.interpolate(by.value ?? "");
  let all: PageLocator;
  switch (by.case) {
    case "role": {
      const name = locator.name ? vars.interpolate(locator.name) : undefined;
      // The role is one of ARIA's (validated by the catalog); Playwright's type lists them.
      all = page.getByRole(
        value as Parameters<Page["getByRole"]>[0],
        name === undefined ? {} : { name, exact },
      );
      break;
    }
    case "label":
      all = page.getByLabel(value, { exact });
      break;
    case "text":
      all = page.getByText(value, { exact });
      break;
    case "placeholder":
      all = page.getByPlaceholder(value, { exact });
      break;
    case "testId":
      all = page.getByTestId(value);
      break;
    case "css":
      // Only CSS: the engine is named, so a value cannot pick another of Playwright's engines.
      all = page.locator(`css=${value}`);
      break;
    default:
      throw new StepFailure(say`the locator names no element`);
  }
  const one = locator.nth > 0 ? all.nth(locator.nth - 1) : all;
  return { all, one, nth: locator.nth, text: locatorText(locator) };
}

/** A number of elements, counted (or expected) by the executor: its own words. */
const elements = (count: number) => own(count === 1 ? "1 element" : `${count} elements`);

/**
 * Why the locator does not designate one element right now, or undefined when it does: none
 * matched, several matched without nth, fewer than nth matched.
 */
async function matchProblem(found: Found, timeoutMs: number): Promise<Said | undefined> {
  const count = await found.all.count();
  if (count === 0) return locatorProblem(say`no element matched within ${own(durationText(timeoutMs))}`);
  if (found.nth === 0 && count > 1) return locatorProblem(say`${elements(count)} matched; set nth`);
  if (found.nth > count)
    return locatorProblem(say`${elements(count)} matched, fewer than nth ${own(found.nth)}`);
  return undefined;
}

/**
 * What a locator matched when it matched no element, or several where one was needed: the cause
 * LOCATOR. Marked where it is found, so that a failure made of it says so (failure()).
 */
const locatorProblems = new WeakSet<Said>();
const locatorProblem = (said: Said): Said => {
  locatorProblems.add(said);
  return said;
};

/** A step's failure from what it found: a locator's problem, else `otherwise`. */
const failure = (said: Said | string, otherwise: StepFailureCause = "assertion") =>
  new StepFailure(said, said instanceof Said && locatorProblems.has(said) ? "locator" : otherwise);

/** An action on one element; a failure is explained from what the page holds now. */
function onElement(
  verb: Said,
  locator: Locator | undefined,
  { page, ctx, timeoutMs }: Scope,
  act: (element: PageLocator) => Promise<unknown>,
): Action {
  if (!locator) return { describe: verb, run: () => Promise.reject(new StepFailure(say`no locator`)) };
  return {
    describe: say`${verb} ${locatorText(locator)}`,
    async run() {
      const found = locate(page, locator, ctx.vars);
      try {
        await act(found.one);
      } catch (error) {
        if (error instanceof StepFailure || ctx.signal.aborted) throw error;
        const { said, cause } = await explain(error, found, timeoutMs);
        throw failure(said, cause);
      }
    },
  };
}

/**
 * What an action's failure means: a known refusal, or what the page shows instead, and why: a
 * locator's problem (marked), an element that did not become ready in time (TIMEOUT), or an
 * expectation of the element not met (the rest).
 */
async function explain(
  error: unknown,
  found: Found,
  timeoutMs: number,
): Promise<{ said: Said | string; cause: StepFailureCause }> {
  const message = error instanceof Error ? error.message : "";
  const known = knownProblem(message);
  if (known) return { said: known, cause: "assertion" };
  const strict = message.includes("strict mode violation");
  if (!strict && !(error instanceof errors.TimeoutError))
    return { said: describeError(error), cause: "assertion" };
  const waited = own(durationText(timeoutMs));
  try {
    const problem = await matchProblem(found, timeoutMs);
    if (problem) return { said: problem, cause: "locator" };
    if (message.includes("intercepts pointer events"))
      return { said: say`another element covers it (waited ${waited})`, cause: "timeout" };
    if (!(await found.one.isVisible()))
      return { said: say`the element is not visible (waited ${waited})`, cause: "timeout" };
    if (!(await found.one.isEnabled({ timeout: 1_000 })))
      return { said: say`the element is disabled (waited ${waited})`, cause: "timeout" };
    if (message.includes("not editable"))
      return { said: say`the element is not editable (waited ${waited})`, cause: "assertion" };
  } catch {
    // The page changed while it was looked at (a navigation): say what the action saw.
  }
  return strict
    ? { said: say`several elements matched; set nth`, cause: "locator" }
    : { said: say`the element was not ready within ${waited}`, cause: "timeout" };
}

/** Playwright's refusals of an element, in the summary's words. */
const knownProblems: [RegExp, (match: RegExpExecArray) => Said][] = [
  [
    /Element is not an <input>, <textarea> or \[contenteditable\]/,
    () => say`the element is not an input, textarea or contenteditable`,
  ],
  [
    /Element is not an <input>, <textarea>, <select>/,
    () => say`the element is not an input, textarea, select or contenteditable`,
  ],
  [/Element is not a <select> element/, () => say`the element is not a <select>`],
  [/Not a checkbox or radio button/, () => say`the element is not a checkbox or radio button`],
  [/Clicking the checkbox did not change its state/, () => say`clicking it did not change its state`],
  [
    /Cannot uncheck radio button/,
    () => say`a radio button cannot be unticked (tick another one of its group)`,
  ],
  [/Unknown key: "([^"\n]*)"/, (match) => say`unknown key ${quote(match[1] ?? "")}`],
  [/Cannot type text into input\[type=number\]/, () => say`the input takes numbers only`],
  [/Malformed value/, () => say`the input does not take this value`],
  [/while parsing css selector/, () => say`the CSS selector is not valid`],
  [
    /Target page, context or browser has been closed|Target crashed/,
    () => say`the page crashed or was closed`,
  ],
];

function knownProblem(message: string): Said | undefined {
  for (const [pattern, word] of knownProblems) {
    const match = pattern.exec(message);
    if (match) return word(match);
  }
  return undefined;
}

/**
 * Any other error, as one short line: Playwright's first line without the method's name, its call
 * log (which quotes the page) left out. Redacted by the summary path like every summary: a plain
 * string, as it may quote the page.
 */
function describeError(error: unknown): Said | string {
  if (!(error instanceof Error)) return say`unknown error`;
  const known = knownProblem(error.message);
  if (known) return known;
  const line = (error.message.split("\n")[0] ?? "")
    .replace(/^[A-Za-z]+\.[A-Za-z]+: /, "")
    .replace(/^Error: /, "");
  return clip(line || error.name, 150);
}

/** Options a select's diagnosis reads at most (their values one by one: no script runs in the page). */
const maxOptionsRead = 100;

/** For a select that timed out: the first wanted option the element does not have. */
async function missingOption(element: PageLocator, wanted: string[]): Promise<StepFailure | undefined> {
  try {
    const options = element.locator("option");
    const count = Math.min(await options.count(), maxOptionsRead);
    const offered = new Set<string>();
    for (let i = 0; i < count; i++) {
      const option = options.nth(i);
      const label = ((await option.textContent({ timeout: 1_000 })) ?? "").trim();
      offered.add(label);
      offered.add((await option.getAttribute("value", { timeout: 1_000 })) ?? label);
    }
    const missing = wanted.find((option) => !offered.has(option));
    return missing === undefined ? undefined : new StepFailure(say`no option ${quote(missing)}`);
  } catch {
    return undefined;
  }
}

const stateWords: Record<ElementState, string> = {
  [ElementState.UNSPECIFIED]: "visible",
  [ElementState.VISIBLE]: "visible",
  [ElementState.HIDDEN]: "hidden",
  [ElementState.ATTACHED]: "attached",
  [ElementState.DETACHED]: "detached",
};

function waitFor(wait: BrowserWaitFor, { page, ctx, timeoutMs }: Scope): Action {
  const waited = own(durationText(timeoutMs));
  if (wait.locator) {
    const { locator } = wait;
    const state = stateWords[wait.state] as "visible" | "hidden" | "attached" | "detached";
    return {
      describe: say`wait for ${locatorText(locator)} to be ${own(state)}`,
      async run() {
        const found = locate(page, locator, ctx.vars);
        try {
          await found.one.waitFor({ state, timeout: timeoutMs });
        } catch (error) {
          if (ctx.signal.aborted) throw error;
          const known = knownProblem(error instanceof Error ? error.message : "");
          if (known) throw new StepFailure(known);
          const count = await found.all.count().catch(() => undefined);
          if (count === undefined) throw new StepFailure(say`not ${own(state)} within ${waited}`, "timeout");
          if (state === "hidden" || state === "detached")
            throw new StepFailure(
              say`${elements(count)} still ${own(state === "hidden" ? "visible" : "in the page")} after ${waited}`,
              "timeout",
            );
          throw failure(
            (await matchProblem(found, timeoutMs).catch(() => undefined)) ??
              say`still hidden after ${waited}`,
            "timeout",
          );
        }
      },
    };
  }
  if (wait.url) {
    const pattern = wait.url;
    return {
      describe: say`wait for URL ${quote(pattern)}`,
      async run() {
        const matches = urlMatcher(ctx.vars.interpolate(pattern), ctx.baseUrl);
        const result = await poll(
          async () => ({ ok: matches(page.url()), got: say`` }),
          timeoutMs,
          ctx.signal,
        );
        if (!result.ok)
          throw new StepFailure(say`the URL is ${quote(page.url())} after ${waited}`, "timeout");
      },
    };
  }
  const text = wait.text;
  return {
    describe: say`wait for text ${quote(text)}`,
    async run() {
      try {
        await page
          .getByText(ctx.vars.interpolate(text))
          .first()
          .waitFor({ state: "visible", timeout: timeoutMs });
      } catch (error) {
        if (error instanceof errors.TimeoutError)
          throw new StepFailure(say`not shown within ${waited}`, "timeout");
        throw error;
      }
    },
  };
}

/** A check's state at one moment: whether it holds and what was found ("got …"). */
interface Probe {
  ok: boolean;
  /** What was found instead, the whole reason of a failure ("expected …, got …"). */
  got: Said;
}

/**
 * Retries a check until it holds or `timeoutMs` passes, as Playwright's expect does (its intervals:
 * at once, then 100, 250, 500 ms, then every second), and checks once more at the end.
 */
async function poll(probe: () => Promise<Probe>, timeoutMs: number, signal: AbortSignal): Promise<Probe> {
  const intervals = [100, 250, 500, 1000];
  const until = performance.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    const result = await probe();
    const left = until - performance.now();
    if (result.ok || left <= 0) return result;
    const pause = Math.min(intervals[Math.min(attempt, intervals.length - 1)] as number, left);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(done, pause);
      function done() {
        signal.removeEventListener("abort", onAbort);
        resolve();
      }
      function onAbort() {
        clearTimeout(timer);
        reject(signal.reason);
      }
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}

const collapse = (text: string) => text.replace(/\s+/g, " ").trim();

function expectation(check: BrowserExpect, { page, ctx, timeoutMs }: Scope): Action {
  const { vars } = ctx;
  // What the page holds is redacted before it is quoted and clipped, and checked for fragments of a
  // value last (as the HTTP kind quotes a response: variables.ts guardActual).
  const actual = (text: string) => vars.guardActual(clip(vars.redact(JSON.stringify(text)), 80));
  const waited = own(durationText(timeoutMs));
  const { locator } = check;
  const on = locator ? say` ${locatorText(locator)}` : say``;
  const passed: Probe = { ok: true, got: say`` };
  const run = (describe: Said, probe: (found: Found | undefined) => Promise<Probe>): Action => ({
    describe: say`expect${on}${describe}`,
    async run() {
      const found = locator ? locate(page, locator, vars) : undefined;
      const last = await poll(
        () =>
          probe(found).catch((error: unknown) => {
            // The page moved on mid-check (a navigation): try again at the next interval.
            const known = knownProblem(error instanceof Error ? error.message : "");
            return { ok: false, got: known ?? say`the page changed while it was checked` };
          }),
        timeoutMs,
        ctx.signal,
      );
      if (!last.ok) throw failure(last.got);
    },
  });
  /** The one element checked, or why there is not exactly one. */
  const one = async (found: Found | undefined): Promise<PageLocator | Said> => {
    if (!found) return say`no locator`;
    return (await matchProblem(found, timeoutMs)) ?? found.one;
  };

  const { check: what } = check;
  switch (what.case) {
    case "visible":
      return run(say` visible`, async (found) => {
        const element = await one(found);
        if (element instanceof Said) return { ok: false, got: element };
        return (await element.isVisible())
          ? passed
          : { ok: false, got: say`expected visible, still hidden after ${waited}` };
      });
    case "hidden":
      return run(say` hidden`, async (found) => {
        if (!found) return { ok: false, got: say`no locator` };
        if ((await found.all.count()) === 0) return passed;
        const element = await one(found);
        if (element instanceof Said) return { ok: false, got: element };
        return (await element.isVisible())
          ? { ok: false, got: say`expected hidden, still visible after ${waited}` }
          : passed;
      });
    case "text": {
      const template = what.value;
      return run(say` text`, async (found) => {
        const element = await one(found);
        if (element instanceof Said) return { ok: false, got: element };
        const text = collapse((await element.textContent({ timeout: 1_000 })) ?? "");
        return text.includes(collapse(vars.interpolate(template)))
          ? passed
          : { ok: false, got: say`expected text to contain ${quote(template)}, got ${actual(text)}` };
      });
    }
    case "value": {
      const template = what.value;
      return run(say` value`, async (found) => {
        const element = await one(found);
        if (element instanceof Said) return { ok: false, got: element };
        const value = await element.inputValue({ timeout: 1_000 });
        return value === vars.interpolate(template)
          ? passed
          : { ok: false, got: say`expected value ${quote(template)}, got ${actual(value)}` };
      });
    }
    case "count": {
      const wanted = what.value;
      return run(say` count`, async (found) => {
        if (!found) return { ok: false, got: say`no locator` };
        const count = await found.all.count();
        return count === wanted
          ? passed
          : { ok: false, got: say`expected ${elements(wanted)}, got ${own(count)}` };
      });
    }
    case "url": {
      const pattern = what.value;
      return run(say` URL`, async () => {
        const url = page.url();
        return urlMatcher(vars.interpolate(pattern), ctx.baseUrl)(url)
          ? passed
          : { ok: false, got: say`expected URL to match ${quote(pattern)}, got ${actual(url)}` };
      });
    }
    case "title": {
      const template = what.value;
      return run(say` title`, async () => {
        const title = await page.title();
        return title.includes(vars.interpolate(template))
          ? passed
          : { ok: false, got: say`expected title to contain ${quote(template)}, got ${actual(title)}` };
      });
    }
    default:
      return { describe: say`expect${on}`, run: () => Promise.reject(new StepFailure(say`no check`)) };
  }
}

/**
 * A URL pattern (step.proto, BrowserExpect.url): a value starting with "/" is appended to the base
 * URL; `**` matches across path segments, `*` within one; the whole URL must match. The page's
 * query string (and fragment) count only when the pattern has one.
 */
export function urlMatcher(pattern: string, baseUrl: string): (url: string) => boolean {
  const full = pattern.startsWith("/") ? `${baseUrl}${pattern}` : pattern;
  const source = full
    .split(/(\*\*|\*)/)
    .map((part) =>
      part === "**" ? ".*" : part === "*" ? "[^/?#]*" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
    )
    .join("");
  const regex = new RegExp(`^${source}$`);
  const withQuery = full.includes("?");
  const withFragment = full.includes("#");
  return (url) => {
    let compared = url;
    if (!withFragment) compared = compared.split("#")[0] ?? "";
    if (!withQuery) compared = compared.split("?")[0] ?? "";
    return regex.test(compared);
  };
}
