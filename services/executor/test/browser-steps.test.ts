// Browser steps run by the step runner with real Chromium against a real web application: every
// action passing and failing, every kind of locator, and the one-line summary of each failure.
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { LocatorSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { findFreePort } from "@testrun/testing";
import { expect } from "chai";
import { BrowserPool } from "../src/browser/pool.js";
import { locatorText, urlMatcher } from "../src/steps/browser.js";
import { runSteps, type TestOutcome } from "../src/steps/runner.js";
import {
  type BrowserTarget,
  browserTargetEgress,
  chromiumPath,
  startBrowserTarget,
  stepsOf,
} from "./browser-target.js";

describe("browser steps (real Chromium against a real web application)", function () {
  this.timeout(60_000);
  let target: BrowserTarget;
  let pool: BrowserPool;
  before(async () => {
    target = await startBrowserTarget();
    pool = new BrowserPool({ executablePath: chromiumPath, contexts: 2 });
  });
  after(async () => {
    await pool?.close();
    await target?.close();
  });

  const variables = { EMAIL: "alice@example.com", USER: "alice" };
  const run = (steps: object[], options: { deadlineMs?: number } = {}): Promise<TestOutcome> =>
    runSteps(stepsOf(steps), {
      baseUrl: target.url,
      variables,
      egress: browserTargetEgress,
      browsers: pool,
      ...options,
    });
  const passes = async (steps: object[]) => {
    const outcome = await run(steps);
    expect(outcome.summary).to.equal(steps.length === 1 ? "1 step passed" : `${steps.length} steps passed`);
    expect(outcome.passed).to.equal(true);
    return outcome;
  };
  /** The summary of a test whose last step (named "s", with a 500 ms timeout) fails. */
  const failure = async (before: object[], browser: object) => {
    const outcome = await run([...before, { name: "s", browser: { timeoutMs: 500, ...browser } }]);
    expect(outcome.passed, outcome.summary).to.equal(false);
    expect(outcome.failedStep).to.equal(before.length + 1);
    return outcome.summary.replace(`step ${before.length + 1} "s": `, "");
  };
  const open = (path: string) => ({ name: `open ${path}`, browser: { goto: { url: path } } });

  describe("actions that pass", () => {
    it("fills, selects, ticks and submits a form, then checks the page it leads to", async () => {
      const outcome = await passes([
        open("/form"),
        { name: "email", browser: { fill: { locator: { label: "Email" }, value: "{{EMAIL}}" } } },
        { name: "password", browser: { fill: { locator: { label: "Password" }, value: "pw" } } },
        { name: "country", browser: { select: { locator: { label: "Country" }, options: ["Japan"] } } },
        { name: "remember", browser: { check: { locator: { label: "Remember me" } } } },
        { name: "forget", browser: { uncheck: { locator: { label: "Remember me" } } } },
        { name: "pro", browser: { check: { locator: { role: "radio", name: "Pro" } } } },
        { name: "typed", browser: { expect: { locator: { label: "Email" }, value: "{{EMAIL}}" } } },
        { name: "chosen", browser: { expect: { locator: { label: "Country" }, value: "jp" } } },
        { name: "submit", browser: { click: { locator: { role: "button", name: "Sign in" } } } },
        { name: "there", browser: { expect: { url: "/welcome" } } },
        { name: "title", browser: { expect: { title: "Welc" } } },
        {
          name: "greeted",
          browser: { expect: { locator: { testId: "greeting" }, text: "Welcome, {{EMAIL}}" } },
        },
      ]);
      expect(outcome.steps.map((step) => step.number)).to.deep.equal([
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
      ]);
      expect(outcome.steps.every((step) => step.passed && step.durationMs >= 0)).to.equal(true);
      expect(target.hits).to.include("POST /welcome");
    });

    it("hovers over an element and sees what hovering shows", async () => {
      await passes([
        open("/hover"),
        { name: "tip hidden", browser: { expect: { locator: { css: "#tip" }, hidden: true } } },
        { name: "hover", browser: { hover: { locator: { text: "Point here" } } } },
        { name: "tip shown", browser: { expect: { locator: { css: "#tip" }, visible: true } } },
      ]);
    });

    it("presses keys on an element and on the focused one", async () => {
      await passes([
        open("/keys"),
        { name: "enter", browser: { press: { locator: { label: "Keys field" }, key: "Enter" } } },
        { name: "seen", browser: { expect: { locator: { testId: "last-key" }, text: "pressed Enter" } } },
        { name: "a", browser: { press: { key: "a" } } },
        { name: "seen a", browser: { expect: { locator: { testId: "last-key" }, text: "pressed a" } } },
      ]);
    });

    it("waits for a text, an element's state and a URL, and checks a URL with its query", async () => {
      await passes([
        open("/delayed"),
        { name: "text", browser: { waitFor: { text: "Ready now" } } },
        {
          name: "gone",
          browser: { waitFor: { locator: { css: "#loading" }, state: "ELEMENT_STATE_DETACHED" } },
        },
        { name: "shown", browser: { waitFor: { locator: { text: "Ready now" } } } },
        { name: "url", browser: { waitFor: { url: "/delayed/done" } } },
        { name: "with query", browser: { expect: { url: "/delayed/done?step=2" } } },
        { name: "glob", browser: { expect: { url: "**/done" } } },
      ]);
    });

    it("counts elements and checks visibility", async () => {
      await passes([
        open("/"),
        { name: "three", browser: { expect: { locator: { css: ".item" }, count: 3 } } },
        { name: "none", browser: { expect: { locator: { css: ".absent" }, count: 0 } } },
        { name: "heading", browser: { expect: { locator: { role: "heading" }, visible: true } } },
        { name: "note hidden", browser: { expect: { locator: { css: "#hidden-note" }, hidden: true } } },
        { name: "absent hidden", browser: { expect: { locator: { css: ".absent" }, hidden: true } } },
        { name: "link", browser: { click: { locator: { role: "link", name: "Open the form" } } } },
        { name: "on form", browser: { expect: { title: "Sign in" } } },
      ]);
    });

    it("takes a named screenshot of the viewport and of the whole page", async () => {
      const outcome = await run([
        open("/tall"),
        { name: "view", browser: { screenshot: { name: "viewport" } } },
        { name: "page", browser: { screenshot: { name: "whole page", fullPage: true } } },
      ]);
      expect(outcome.passed, outcome.summary).to.equal(true);
      // Screenshots of a passed test are kept (PNG checks: browser-artifacts.test.ts).
      expect(outcome.artifacts.map(({ name, step }) => ({ name, step }))).to.deep.equal([
        { name: "viewport", step: 2 },
        { name: "whole page", step: 3 },
      ]);
    });
  });

  describe("actions that fail, each saying which action, which locator and what was found", () => {
    it("goto: a page that never loads, a refused connection, a scheme other than http(s)", async () => {
      expect(await failure([], { goto: { url: "/hang" } })).to.equal(
        'goto "/hang": the page did not load within 500 ms',
      );
      const closed = `http://127.0.0.2:${await findFreePort()}/`;
      expect(await failure([], { goto: { url: closed } })).to.equal(
        `goto "${closed}": could not connect to the host`,
      );
      expect(await failure([], { goto: { url: "file:///etc/passwd" } })).to.equal(
        'goto "file:///etc/passwd": only http and https URLs can be opened',
      );
    });

    it("click: no match, several matches, fewer than nth, disabled, covered, not visible", async () => {
      const home = [open("/")];
      expect(await failure(home, { click: { locator: { role: "button", name: "Nope" } } })).to.equal(
        "click getByRole('button', { name: 'Nope' }): no element matched within 500 ms",
      );
      expect(await failure(home, { click: { locator: { css: ".item" } } })).to.equal(
        "click locator('.item'): 3 elements matched; set nth",
      );
      expect(await failure(home, { click: { locator: { css: ".item", nth: 5 } } })).to.equal(
        "click locator('.item').nth(4): 3 elements matched, fewer than nth 5",
      );
      expect(
        await failure(home, { click: { locator: { role: "button", name: "Disabled action" } } }),
      ).to.equal(
        "click getByRole('button', { name: 'Disabled action' }): the element is disabled (waited 500 ms)",
      );
      // Long enough for Playwright to reach its hit test on a busy machine (it says what covers it).
      expect(await failure(home, { click: { locator: { css: "#covered" } }, timeoutMs: 3_000 })).to.equal(
        "click locator('#covered'): another element covers it (waited 3 s)",
      );
      expect(await failure(home, { click: { locator: { css: "#hidden-note" } } })).to.equal(
        "click locator('#hidden-note'): the element is not visible (waited 500 ms)",
      );
    });

    it("fill: an element that takes no text, an unknown variable", async () => {
      const form = [open("/form")];
      expect(await failure(form, { fill: { locator: { testId: "static" }, value: "x" } })).to.equal(
        "fill getByTestId('static'): the element is not an input, textarea, select or contenteditable",
      );
      expect(await failure(form, { fill: { locator: { label: "Email" }, value: "{{NOPE}}" } })).to.equal(
        "fill getByLabel('Email'): unknown variable {{NOPE}}",
      );
    });

    it("press, select, check, uncheck, hover", async () => {
      expect(
        await failure([open("/keys")], { press: { locator: { label: "Keys field" }, key: "Nope" } }),
      ).to.equal(`press "Nope" on getByLabel('Keys field'): unknown key "Nope"`);
      const form = [open("/form")];
      expect(await failure(form, { select: { locator: { label: "Country" }, options: ["Mars"] } })).to.equal(
        `select getByLabel('Country'): no option "Mars"`,
      );
      expect(await failure(form, { check: { locator: { label: "Email" } } })).to.equal(
        "check getByLabel('Email'): the element is not a checkbox or radio button",
      );
      expect(await failure(form, { uncheck: { locator: { label: "Free" } } })).to.equal(
        "uncheck getByLabel('Free'): a radio button cannot be unticked (tick another one of its group)",
      );
      expect(await failure(form, { hover: { locator: { text: "Nowhere" } } })).to.equal(
        "hover getByText('Nowhere'): no element matched within 500 ms",
      );
    });

    it("waitFor: an element, a state, a URL, a text", async () => {
      const home = [open("/")];
      expect(await failure(home, { waitFor: { locator: { text: "Never" } } })).to.equal(
        "wait for getByText('Never') to be visible: no element matched within 500 ms",
      );
      expect(
        await failure(home, { waitFor: { locator: { role: "heading" }, state: "ELEMENT_STATE_HIDDEN" } }),
      ).to.equal("wait for getByRole('heading') to be hidden: 1 element still visible after 500 ms");
      expect(await failure(home, { waitFor: { url: "/elsewhere" } })).to.equal(
        `wait for URL "/elsewhere": the URL is "${target.url}/" after 500 ms`,
      );
      expect(await failure(home, { waitFor: { text: "Never shown" } })).to.equal(
        'wait for text "Never shown": not shown within 500 ms',
      );
    });

    it("expect: visible, hidden, text, value, count, URL, title", async () => {
      const home = [open("/")];
      expect(await failure(home, { expect: { locator: { css: "#hidden-note" }, visible: true } })).to.equal(
        "expect locator('#hidden-note') visible: expected visible, still hidden after 500 ms",
      );
      expect(await failure(home, { expect: { locator: { role: "heading" }, hidden: true } })).to.equal(
        "expect getByRole('heading') hidden: expected hidden, still visible after 500 ms",
      );
      expect(await failure(home, { expect: { locator: { testId: "greeting" }, text: "Goodbye" } })).to.equal(
        `expect getByTestId('greeting') text: expected text to contain "Goodbye", got "Hello, visitor"`,
      );
      expect(await failure(home, { expect: { locator: { css: ".item" }, text: "Item" } })).to.equal(
        "expect locator('.item') text: 3 elements matched; set nth",
      );
      expect(await failure(home, { expect: { locator: { css: ".item" }, count: 2 } })).to.equal(
        "expect locator('.item') count: expected 2 elements, got 3",
      );
      expect(await failure(home, { expect: { url: "/form" } })).to.equal(
        `expect URL: expected URL to match "/form", got "${target.url}/"`,
      );
      expect(await failure(home, { expect: { title: "Shop front" } })).to.equal(
        `expect title: expected title to contain "Shop front", got "Home of the shop"`,
      );
      // The page shows a variable's value: the summary names it instead.
      const filled = [
        open("/form"),
        { name: "email", browser: { fill: { locator: { label: "Email" }, value: "{{EMAIL}}" } } },
      ];
      expect(await failure(filled, { expect: { locator: { label: "Email" }, value: "bob" } })).to.equal(
        `expect getByLabel('Email') value: expected value "bob", got "{{EMAIL}}"`,
      );
    });

    it("stops at the failing step: the steps after it do not run, and each that ran has its result", async () => {
      const outcome = await run([
        open("/"),
        { name: "missing", browser: { click: { locator: { text: "Nowhere" } }, timeoutMs: 300 } },
        open("/form"),
      ]);
      expect(outcome).to.include({ passed: false, failedStep: 2 });
      expect(outcome.steps.map(({ number, passed }) => ({ number, passed }))).to.deep.equal([
        { number: 1, passed: true },
        { number: 2, passed: false },
      ]);
      expect(outcome.steps[1]?.durationMs).to.be.at.least(300);
    });

    it("fails a browser step past the test's deadline, saying so", async () => {
      const outcome = await run(
        [open("/"), { name: "waits long", browser: { waitFor: { text: "Never" }, timeoutMs: 60_000 } }],
        // Room for a context and step 1 on a busy machine: it is step 2 that must run past it.
        { deadlineMs: 4_000 },
      );
      expect(outcome).to.include({
        passed: false,
        failedStep: 2,
        summary: 'step 2 "waits long": the test ran past its deadline of 4 s',
      });
    });

    it("fails a browser step on an executor without a browser", async () => {
      const outcome = await runSteps(stepsOf([open("/")]), {
        baseUrl: target.url,
        variables,
        egress: browserTargetEgress,
      });
      expect(outcome.summary).to.equal('step 1 "open /": this executor runs no browser steps');
    });
  });

  describe("locators", () => {
    const count = (locator: object, n: number) => ({
      name: `count ${JSON.stringify(locator)}`,
      browser: { expect: { locator, count: n } },
    });

    it("finds by role and name, label, text, placeholder, test id and CSS, exact or not", async () => {
      await passes([
        open("/"),
        count({ role: "heading", name: "welcome" }, 1),
        count({ role: "heading", name: "welcome", exact: true }, 0),
        count({ role: "heading", name: "Welcome", exact: true }, 1),
        count({ text: "item" }, 3),
        count({ text: "item two" }, 1),
        count({ text: "item two", exact: true }, 0),
        count({ testId: "greeting" }, 1),
        count({ css: "li.item" }, 3),
        open("/form"),
        count({ label: "email" }, 1),
        count({ label: "email", exact: true }, 0),
        count({ label: "Email", exact: true }, 1),
        count({ placeholder: "you@example" }, 1),
        count({ placeholder: "you@example", exact: true }, 0),
        count({ placeholder: "you@example.com", exact: true }, 1),
      ]);
    });

    it("picks the nth match (1-based) and, without nth, requires exactly one", async () => {
      await passes([
        open("/"),
        { name: "first", browser: { expect: { locator: { css: ".item", nth: 1 }, text: "Item one" } } },
        { name: "second", browser: { expect: { locator: { text: "Item", nth: 2 }, text: "Item two" } } },
        { name: "third", browser: { expect: { locator: { role: "listitem", nth: 3 }, text: "Item three" } } },
        { name: "the one", browser: { expect: { locator: { text: "Item two" }, visible: true } } },
      ]);
      expect(
        await failure([open("/")], { expect: { locator: { role: "listitem" }, visible: true } }),
      ).to.equal("expect getByRole('listitem') visible: 3 elements matched; set nth");
    });

    it("reads as Playwright code", () => {
      const text = (locator: object) => String(locatorText(fromJson(LocatorSchema, locator as JsonValue)));
      expect(text({ role: "button", name: "Sign in" })).to.equal("getByRole('button', { name: 'Sign in' })");
      expect(text({ role: "button", name: "Sign in", exact: true })).to.equal(
        "getByRole('button', { name: 'Sign in', exact: true })",
      );
      expect(text({ role: "heading" })).to.equal("getByRole('heading')");
      expect(text({ label: "Email", exact: true })).to.equal("getByLabel('Email', { exact: true })");
      expect(text({ text: "It's", nth: 1 })).to.equal("getByText('It\\'s').first()");
      expect(text({ placeholder: "you@" })).to.equal("getByPlaceholder('you@')");
      expect(text({ testId: "greeting", nth: 3 })).to.equal("getByTestId('greeting').nth(2)");
      expect(text({ css: "ul > li" })).to.equal("locator('ul > li')");
    });
  });

  describe("HTTP and browser steps in one test", () => {
    it("passes a value an HTTP step saved to the browser steps after it", async () => {
      const login = {
        name: "log in",
        http: {
          request: { method: "POST", path: "/api/login", json: { user: "{{USER}}" } },
          save: { token: "$.token" },
        },
      };
      await passes([
        login,
        { name: "account", browser: { goto: { url: "/account?token={{token}}" } } },
        { name: "greeted", browser: { expect: { locator: { role: "heading" }, text: "Account of alice" } } },
      ]);
      // The saved token is a secret like any variable: a summary quoting the page's URL names it.
      const summary = await failure(
        [login, { name: "account", browser: { goto: { url: "/account?token={{token}}" } } }],
        { expect: { url: "/elsewhere" } },
      );
      expect(summary).to.equal(
        `expect URL: expected URL to match "/elsewhere", got "${target.url}/account?token={{token}}"`,
      );
    });
  });

  describe("URL patterns", () => {
    const base = "http://shop.test";
    const matches = (pattern: string, url: string) => urlMatcher(pattern, base)(url);
    it("appends a path to the base URL, matches * within a segment and ** across", () => {
      expect(matches("/login", `${base}/login`)).to.equal(true);
      expect(matches("/login", `${base}/login/x`)).to.equal(false);
      expect(matches("/items/*", `${base}/items/7`)).to.equal(true);
      expect(matches("/items/*", `${base}/items/7/edit`)).to.equal(false);
      expect(matches("**/edit", `${base}/items/7/edit`)).to.equal(true);
      expect(matches("https://other.test/a", "https://other.test/a")).to.equal(true);
      expect(matches("/a.b", `${base}/axb`)).to.equal(false);
    });
    it("ignores the page's query and fragment unless the pattern has one", () => {
      expect(matches("/login", `${base}/login?next=/home#top`)).to.equal(true);
      expect(matches("/login?next=*", `${base}/login?next=home`)).to.equal(true);
      expect(matches("/login?next=home", `${base}/login?next=away`)).to.equal(false);
    });
  });
});
