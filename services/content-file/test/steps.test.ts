import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { toJson } from "@bufbuild/protobuf";
import { StepSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { expect } from "chai";
import { stringify as stringifyYaml } from "yaml";
import { ariaRoles } from "../src/browser-steps.js";
import { fileFieldPath, httpStepOf, stepFromFile, stepsFromFile, stepToFile } from "../src/steps.js";
import { parseTestCaseFile, testCaseToFile } from "../src/test-case-file.js";

/** The step of the test-case format (docs/runs.md), as the contract gave it. */
const decisionsExample = {
  name: "log in",
  http: {
    method: "POST",
    path: "/api/login",
    headers: {},
    query: {},
    json: { user: "{{USER}}", password: "{{PASSWORD}}" },
    timeoutMs: 10000,
  },
  expect: {
    status: 200,
    headers: { "content-type": "application/json" },
    bodyContains: ["welcome"],
    json: { "$.ok": true },
    maxDurationMs: 2000,
  },
  save: { token: "$.token" },
};

const protoJson = (value: unknown, path = "steps[0]") => toJson(StepSchema, stepFromFile(value, path));

/** The message of the error `fn` throws. */
function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected an error");
}

describe("content-file: steps from the docs/runs.md file format to testrun.catalog.v1.Step", () => {
  it("converts the contract's example: http is the request, expect and save move into HttpStep, status becomes a list", () => {
    expect(protoJson(decisionsExample)).to.deep.equal({
      name: "log in",
      http: {
        request: {
          method: "POST",
          path: "/api/login",
          json: { user: "{{USER}}", password: "{{PASSWORD}}" },
          timeoutMs: 10000,
        },
        expect: {
          status: [200],
          headers: { "content-type": "application/json" },
          bodyContains: ["welcome"],
          json: { "$.ok": true },
          maxDurationMs: 2000,
        },
        save: { token: "$.token" },
      },
    });
  });

  it("keeps a list of statuses, a raw body, and takes YAML numbers in headers and query as text", () => {
    const step = protoJson({
      name: "upload",
      http: {
        method: "PUT",
        path: "/f",
        raw: "a,b\n1,2",
        headers: { "X-Retry": 2 },
        query: { page: 3, all: true },
      },
      expect: { status: [200, 201], bodyNotContains: "error" },
    });
    expect(step).to.deep.equal({
      name: "upload",
      http: {
        request: {
          method: "PUT",
          path: "/f",
          raw: "a,b\n1,2",
          headers: { "X-Retry": "2" },
          query: { page: "3", all: "true" },
        },
        expect: { status: [200, 201], bodyNotContains: ["error"] },
      },
    });
  });

  it("sends a JSON null body when json is null, and no body when neither json nor raw is given", () => {
    const withNull = stepFromFile({ name: "n", http: { method: "POST", path: "/", json: null } }, "s");
    expect(httpStepOf(withNull)?.request?.body.case).to.equal("json");
    expect(toJson(StepSchema, withNull)).to.have.nested.property("http.request.json", null);
    const none = stepFromFile({ name: "n", http: { method: "GET", path: "/" } }, "s");
    expect(httpStepOf(none)?.request?.body.case).to.equal(undefined);
    expect(httpStepOf(none)?.expect).to.equal(undefined);
  });

  it("names the bad field by its path in the file", () => {
    const cases: [unknown, string][] = [
      [{ http: { method: "GET", path: "/" } }, "steps[0].name: is required"],
      [{ name: "x", http: { path: "/" } }, "steps[0].http.method: is required"],
      [{ name: "x", http: { method: 7, path: "/" } }, "steps[0].http.method: must be a string, not number"],
      [
        { name: "x", http: { method: "GET", path: "/", timeoutMs: "10s" } },
        "steps[0].http.timeoutMs: must be a whole number, not string",
      ],
      [
        { name: "x", http: { method: "GET", path: "/", timeoutMs: 1.5 } },
        "steps[0].http.timeoutMs: must be a whole number, not 1.5",
      ],
      [
        { name: "x", http: { method: "GET", path: "/", headers: { a: ["b"] } } },
        "steps[0].http.headers.a: must be a string, not a list",
      ],
      [
        { name: "x", http: { method: "GET", path: "/" }, expect: { status: ["200"] } },
        "steps[0].expect.status[0]: must be a whole number, not string",
      ],
      [
        { name: "x", http: { method: "GET", path: "/" }, expect: { bodyContains: [1] } },
        "steps[0].expect.bodyContains[0]: must be a string, not number",
      ],
      [
        { name: "x", http: { method: "GET", path: "/" }, save: "token" },
        "steps[0].save: must be an object, not string",
      ],
      [
        { name: "x", http: { method: "POST", path: "/", json: { n: Number.POSITIVE_INFINITY } } },
        "steps[0].http.json.n: must be a finite number",
      ],
      [
        { name: "x", http: { method: "POST", path: "/", json: {}, raw: "" } },
        'steps[0].http.raw: cannot be set together with "json": a request has one body',
      ],
    ];
    for (const [step, message] of cases)
      expect(errorOf(() => stepFromFile(step, "steps[0]"))).to.equal(message);
  });

  it("refuses unknown fields, suggesting the file's spelling for a snake_case or proto-shaped one", () => {
    expect(
      errorOf(() => stepFromFile({ name: "x", http: { method: "GET", path: "/", timeout_ms: 5 } }, "s")),
    ).to.equal('s.http.timeout_ms: unknown field (did you mean "timeoutMs"?)');
    expect(errorOf(() => stepFromFile({ name: "x", http: { request: { method: "GET" } } }, "s"))).to.equal(
      "s.http.request: unknown field; expected one of: method, path, headers, query, json, raw, timeoutMs",
    );
    expect(
      errorOf(() =>
        stepFromFile({ name: "x", http: { method: "GET", path: "/" }, expect: { body_contains: [] } }, "s"),
      ),
    ).to.equal('s.expect.body_contains: unknown field (did you mean "bodyContains"?)');
    expect(
      errorOf(() => stepFromFile({ name: "x", http: { method: "GET", path: "/" }, expected: {} }, "s")),
    ).to.equal("s.expected: unknown field; expected one of: name, http, expect, save, browser");
  });

  it("converts a list of steps in order, and refuses a steps value that is not a list", () => {
    const steps = stepsFromFile(
      [
        { name: "a", http: { method: "GET", path: "/a" } },
        { name: "b", http: { method: "GET", path: "/b" } },
      ],
      "steps",
    );
    expect(steps.map((step) => step.name)).to.deep.equal(["a", "b"]);
    expect(errorOf(() => stepsFromFile({ name: "a" }, "steps"))).to.equal(
      "steps: must be a list, not an object",
    );
    expect(errorOf(() => stepsFromFile(undefined, "steps"))).to.equal("steps: is required");
  });

  it("rewrites the catalog's field paths (proto names) into the file's", () => {
    expect(fileFieldPath("steps[1].http.request.path")).to.equal("steps[1].http.path");
    expect(fileFieldPath("steps[1].http.request.timeout_ms")).to.equal("steps[1].http.timeoutMs");
    expect(fileFieldPath("steps[0].http.expect.status[2]")).to.equal("steps[0].expect.status[2]");
    expect(fileFieldPath("steps[0].http.expect.max_duration_ms")).to.equal("steps[0].expect.maxDurationMs");
    expect(fileFieldPath("steps[0].http.expect.body_not_contains[0]")).to.equal(
      "steps[0].expect.bodyNotContains[0]",
    );
    expect(fileFieldPath("steps[3].http.save")).to.equal("steps[3].save");
    expect(fileFieldPath("steps[0].http.expect.json[$.user_id]")).to.equal("steps[0].expect.json[$.user_id]");
    expect(fileFieldPath("tags[2]")).to.equal("tags[2]");
    expect(fileFieldPath("name")).to.equal("name");
  });
});

/** An HTTP step of every field. */
const everyField = {
  name: "every field",
  http: {
    method: "POST",
    path: "/api/items?x=1",
    headers: { authorization: "Bearer {{token}}" },
    query: { page: "2" },
    json: { nested: [1, "two", null, { ok: true }] },
    timeoutMs: 5000,
  },
  expect: {
    status: [200, 201],
    headers: { "content-type": "json" },
    bodyContains: ["a"],
    bodyNotContains: ["b"],
    json: { "$.items[0].id": 7, "$.ok": true },
    maxDurationMs: 900,
  },
  save: { id: "$.items[0].id" },
};

describe("content-file: steps and test cases written back to the file format", () => {
  it("writes what it read, field for field, leaving out defaults", () => {
    expect(stepToFile(stepFromFile(everyField, "steps[0]"))).to.deep.equal(everyField);
    const minimal = { name: "ping", http: { method: "GET", path: "/" } };
    expect(stepToFile(stepFromFile(minimal, "steps[0]"))).to.deep.equal(minimal);
  });

  it("keeps JSON bodies that look empty and raw bodies, and writes one status as a number", () => {
    for (const json of [{}, [], 0, null, ""]) {
      const step = { name: "s", http: { method: "POST", path: "/", json } };
      expect(stepToFile(stepFromFile(step, "s"))).to.deep.equal(step);
    }
    const raw = { name: "s", http: { method: "PUT", path: "/", raw: "a=1" }, expect: { status: 204 } };
    expect(stepToFile(stepFromFile(raw, "s"))).to.deep.equal(raw);
  });

  it("round-trips a test case through YAML text exactly", () => {
    const written = testCaseToFile({
      name: "t",
      tags: ["smoke"],
      enabled: false,
      steps: [stepFromFile(everyField, "s")],
    });
    const [read] = parseTestCaseFile(stringifyYaml(written), "yaml");
    expect(read?.enabled).to.equal(false);
    expect(read?.tags).to.deep.equal(["smoke"]);
    expect(read?.steps.map((step) => toJson(StepSchema, step))).to.deep.equal([
      toJson(StepSchema, stepFromFile(everyField, "s")),
    ]);
    expect(testCaseToFile({ name: "t", tags: [], enabled: true, steps: [] })).to.deep.equal({
      name: "t",
      steps: [],
    });
  });
});

describe("content-file: browser steps (a step's browser object is BrowserStep's proto JSON)", () => {
  /** One step of every action and locator form, as a person writes it (defaults left out). */
  const everyAction = [
    { name: "open sign-in", browser: { goto: { url: "/login" } } },
    { name: "email", browser: { fill: { locator: { label: "Email" }, value: "{{EMAIL}}" } } },
    { name: "clear", browser: { fill: { locator: { placeholder: "Search", exact: true } } } },
    {
      name: "submit",
      browser: { click: { locator: { role: "button", name: "Sign in", exact: true } }, timeoutMs: 5000 },
    },
    { name: "second", browser: { click: { locator: { text: "More", nth: 2 } } } },
    { name: "enter", browser: { press: { locator: { css: "input[name=q]" }, key: "Enter" } } },
    { name: "tab", browser: { press: { key: "Tab" } } },
    { name: "country", browser: { select: { locator: { testId: "country" }, options: ["de", "France"] } } },
    { name: "terms", browser: { check: { locator: { role: "checkbox", name: "I agree" } } } },
    { name: "news", browser: { uncheck: { locator: { label: "Newsletter" } } } },
    { name: "menu", browser: { hover: { locator: { css: "nav > .menu" } } } },
    { name: "gone", browser: { waitFor: { locator: { testId: "spinner" }, state: "detached" } } },
    { name: "shown", browser: { waitFor: { locator: { role: "dialog" }, state: "visible" } } },
    { name: "at home", browser: { waitFor: { url: "**/home" } } },
    { name: "greeting", browser: { waitFor: { text: "Welcome back" } } },
    { name: "visible", browser: { expect: { locator: { testId: "greeting" }, visible: true } } },
    { name: "hidden", browser: { expect: { locator: { text: "Error" }, hidden: true } } },
    { name: "text", browser: { expect: { locator: { testId: "greeting" }, text: "Hello" } } },
    { name: "value", browser: { expect: { locator: { label: "Email" }, value: "" } } },
    { name: "count", browser: { expect: { locator: { role: "listitem" }, count: 0 } } },
    { name: "url", browser: { expect: { url: "/home" } } },
    { name: "title", browser: { expect: { title: "Shop" } } },
    { name: "home", browser: { screenshot: { name: "home", fullPage: true } } },
    { name: "viewport", browser: { screenshot: { name: "viewport" } } },
  ];

  it("reads the documented example into BrowserSteps", () => {
    const [read] = parseTestCaseFile(
      `name: sign in
recordTrace: true
steps:
  - name: open sign-in
    browser: { goto: { url: /login } }
  - name: email
    browser: { fill: { locator: { label: Email }, value: "{{EMAIL}}" } }
  - name: submit
    browser: { click: { locator: { role: button, name: Sign in } }, timeoutMs: 5000 }
  - name: greeting shown
    browser: { expect: { locator: { testId: greeting }, text: Hello } }
  - name: home
    browser: { screenshot: { name: home, fullPage: true } }
`,
      "yaml",
    );
    expect(read?.recordTrace).to.equal(true);
    expect(read?.steps.map((s) => toJson(StepSchema, s))).to.deep.equal([
      { name: "open sign-in", browser: { goto: { url: "/login" } } },
      { name: "email", browser: { fill: { locator: { label: "Email" }, value: "{{EMAIL}}" } } },
      {
        name: "submit",
        browser: { click: { locator: { role: "button", name: "Sign in" } }, timeoutMs: 5000 },
      },
      { name: "greeting shown", browser: { expect: { locator: { testId: "greeting" }, text: "Hello" } } },
      { name: "home", browser: { screenshot: { name: "home", fullPage: true } } },
    ]);
  });

  it("writes every action back as it was read, and the text of a test case mixing kinds reads back the same", () => {
    for (const written of everyAction) expect(stepToFile(stepFromFile(written, "s"))).to.deep.equal(written);
    const steps = [stepFromFile(everyField, "s"), ...everyAction.map((s) => stepFromFile(s, "s"))];
    for (const format of ["yaml", "json"] as const) {
      const file = testCaseToFile({ name: "mixed", tags: [], enabled: true, recordTrace: true, steps });
      const text = format === "json" ? JSON.stringify(file) : stringifyYaml(file);
      const [read] = parseTestCaseFile(text, format);
      expect(read?.recordTrace).to.equal(true);
      expect(read?.steps.map((s) => toJson(StepSchema, s))).to.deep.equal(
        steps.map((s) => toJson(StepSchema, s)),
      );
    }
  });

  it("writes an element state by its short name and reads the proto JSON name too", () => {
    const full = stepFromFile(
      { name: "w", browser: { waitFor: { locator: { css: "a" }, state: "ELEMENT_STATE_HIDDEN" } } },
      "s",
    );
    expect(stepToFile(full)).to.deep.equal({
      name: "w",
      browser: { waitFor: { locator: { css: "a" }, state: "hidden" } },
    });
    expect(toJson(StepSchema, full)).to.have.nested.property("browser.waitFor.state", "ELEMENT_STATE_HIDDEN");
    // A recordTrace left out is false, and false is not written.
    expect(
      testCaseToFile({ name: "t", tags: [], enabled: true, recordTrace: false, steps: [] }),
    ).to.deep.equal({
      name: "t",
      steps: [],
    });
  });

  it("names the bad field by its path in the file", () => {
    const cases: [unknown, string][] = [
      [{ name: "x" }, "steps[0]: needs http (a request to send) or browser (an action on the test's page)"],
      [
        { name: "x", http: { method: "GET", path: "/" }, browser: { goto: { url: "/" } } },
        'steps[0].browser: cannot be set together with "http": a step is either a request or a browser action',
      ],
      [
        { name: "x", browser: { goto: { url: "/" } }, expect: { status: 200 } },
        "steps[0].expect: belongs to HTTP steps: a browser step checks the page with browser.expect",
      ],
      [
        { name: "x", browser: { goto: { url: "/" } }, save: { a: "$.a" } },
        "steps[0].save: belongs to HTTP steps: a browser step saves no values",
      ],
      [{ name: "x", browser: "goto /" }, "steps[0].browser: must be an object, not string"],
      [
        { name: "x", browser: { timeoutMs: 5 } },
        "steps[0].browser: needs an action: one of goto, click, fill, press, select, check, uncheck, hover, waitFor, expect, screenshot",
      ],
      [
        { name: "x", browser: { goto: { url: "/" }, click: {} } },
        'steps[0].browser.click: cannot be set together with "goto": only one of goto, click, fill, press, select, check, uncheck, hover, waitFor, expect, screenshot is set',
      ],
      [
        { name: "x", browser: { click: { locator: { role: "button", css: "b" } } } },
        'steps[0].browser.click.locator.css: cannot be set together with "role": only one of role, label, text, placeholder, testId, css is set',
      ],
      [
        { name: "x", browser: { click: { locator: { role: 7 } } } },
        "steps[0].browser.click.locator.role: must be a string, not number",
      ],
      [
        { name: "x", browser: { click: { locator: { test_id: "a" } } } },
        'steps[0].browser.click.locator.test_id: unknown field (did you mean "testId"?)',
      ],
      [
        { name: "x", browser: { click: { selector: "a" } } },
        "steps[0].browser.click.selector: unknown field; expected one of: locator",
      ],
      [
        { name: "x", browser: { click: { locator: { css: "a", exact: "yes" } } } },
        "steps[0].browser.click.locator.exact: must be true or false, not string",
      ],
      [
        { name: "x", browser: { click: { locator: { css: "a", nth: 1.5 } } } },
        "steps[0].browser.click.locator.nth: must be a whole number, not 1.5",
      ],
      [
        { name: "x", browser: { fill: { locator: { label: "Zip" }, value: 10115 } } },
        "steps[0].browser.fill.value: must be a string, not number",
      ],
      [
        { name: "x", browser: { select: { locator: { css: "s" }, options: ["a", 2] } } },
        "steps[0].browser.select.options[1]: must be a string, not number",
      ],
      [
        { name: "x", browser: { waitFor: { locator: { css: "a" }, state: "gone" } } },
        "steps[0].browser.waitFor.state: must be one of visible, hidden, attached, detached",
      ],
      [
        { name: "x", browser: { expect: { locator: { css: "a" }, visible: true, hidden: true } } },
        'steps[0].browser.expect.hidden: cannot be set together with "visible": only one of visible, hidden, text, value, count, url, title is set',
      ],
      [
        { name: "x", browser: { screenshot: { name: "a", full_page: true } } },
        'steps[0].browser.screenshot.full_page: unknown field (did you mean "fullPage"?)',
      ],
    ];
    for (const [step, message] of cases)
      expect(errorOf(() => stepFromFile(step, "steps[0]"))).to.equal(message);
    // A single option is a list of one, as elsewhere in the format.
    expect(
      toJson(
        StepSchema,
        stepFromFile({ name: "s", browser: { select: { locator: { css: "s" }, options: "de" } } }, "s"),
      ),
    ).to.have.deep.nested.property("browser.select.options", ["de"]);
  });

  it("rewrites the catalog's field paths of browser steps into the file's", () => {
    expect(fileFieldPath("steps[2].browser.click.locator.role")).to.equal(
      "steps[2].browser.click.locator.role",
    );
    expect(fileFieldPath("steps[0].browser.wait_for.locator.test_id")).to.equal(
      "steps[0].browser.waitFor.locator.testId",
    );
    expect(fileFieldPath("steps[1].browser.timeout_ms")).to.equal("steps[1].browser.timeoutMs");
    expect(fileFieldPath("steps.steps[3].browser.expect.locator")).to.equal(
      "steps.steps[3].browser.expect.locator",
    );
  });

  it("knows the ARIA roles of the playwright-core the executor drives", () => {
    // The package exports no types path: its types sit beside its main file.
    const main = createRequire(import.meta.url).resolve("playwright-core");
    const types = readFileSync(join(dirname(main), "types", "types.d.ts"), "utf8");
    const union = /getByRole\(role: ((?:"[a-z]+"\|?)+),/.exec(types)?.[1];
    expect(union, "getByRole's role type in playwright-core").to.be.a("string");
    expect([...ariaRoles]).to.deep.equal(union?.split("|").map((role) => JSON.parse(role)));
  });
});
