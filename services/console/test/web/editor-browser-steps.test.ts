// The editor's browser kind of step (services/console/web/src/features/step-editor/browser-*.ts):
// every action of step.proto's BrowserStep between the catalog's messages, the form and the JSON
// view (the file format of @testrun/content-file) without loss, only the chosen action's fields
// sent, what the form cannot read said at its field, the catalog's FieldViolation paths under
// `steps[i].browser` put at the form's fields, `{{NAME}}` checked where the executor interpolates,
// a step's kind changed and back without losing what was typed.
import { fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import { TestCaseSchema } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { StepSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { expect } from "chai";
import {
  type CaseDraft,
  caseOfDraft,
  draftOfCase,
  logicOf,
  type StepDraft,
  withKind,
} from "../../web/src/features/step-editor/kinds.js";
import { draftOfJson, jsonOfDraft, snapshotOf } from "../../web/src/features/test-cases/json-view.js";
import { referenceWarnings } from "../../web/src/features/test-cases/references.js";
import { fieldOfPath, stillAtSentValues } from "../../web/src/features/test-cases/violations.js";

/** Every action, every kind of locator, every check and state, as the catalog stores them. */
const stepsJson: JsonValue[] = [
  { name: "open", browser: { goto: { url: "/login?next={{NEXT}}" } } },
  { name: "email", browser: { fill: { locator: { label: "Email", exact: true }, value: "{{DEMO_USER}}" } } },
  { name: "clear", browser: { fill: { locator: { placeholder: "Search…" } } } },
  { name: "submit", browser: { click: { locator: { role: "button", name: "Sign in" } }, timeoutMs: 5000 } },
  { name: "enter", browser: { press: { key: "Enter" } } },
  { name: "tab", browser: { press: { locator: { testId: "search" }, key: "Tab" } } },
  { name: "plan", browser: { select: { locator: { css: "select#plan" }, options: ["Pro", "Yearly"] } } },
  { name: "agree", browser: { check: { locator: { role: "checkbox", name: "I agree", nth: 2 } } } },
  { name: "news", browser: { uncheck: { locator: { label: "Newsletter" } } } },
  { name: "menu", browser: { hover: { locator: { text: "Menu" } } } },
  { name: "toast", browser: { waitFor: { locator: { css: ".toast" } } } },
  { name: "gone", browser: { waitFor: { locator: { css: ".toast" }, state: "ELEMENT_STATE_DETACHED" } } },
  { name: "moved", browser: { waitFor: { url: "/account/**" } } },
  { name: "saved", browser: { waitFor: { text: "Saved" } } },
  { name: "shown", browser: { expect: { locator: { testId: "greeting" }, visible: true } } },
  { name: "hidden", browser: { expect: { locator: { text: "Error" }, hidden: true } } },
  { name: "hello", browser: { expect: { locator: { testId: "greeting" }, text: "Hello {{DEMO_USER}}" } } },
  { name: "typed", browser: { expect: { locator: { label: "Email" }, value: "" } } },
  { name: "none", browser: { expect: { locator: { css: ".error" }, count: 0 } } },
  { name: "three", browser: { expect: { locator: { role: "listitem" }, count: 3 } } },
  { name: "url", browser: { expect: { url: "/account" } } },
  { name: "title", browser: { expect: { title: "Dashboard" } } },
  { name: "home", browser: { screenshot: { name: "home page", fullPage: true } } },
  { name: "window", browser: { screenshot: { name: "window" } } },
];

const caseDraft = (steps: JsonValue[] = stepsJson): CaseDraft => {
  const testCase = fromJson(TestCaseSchema, { name: "browser", steps, recordTrace: true });
  const { draft, unknownKinds } = draftOfCase(testCase);
  expect(unknownKinds).to.equal(0);
  return draft;
};
type BrowserStepDraft = Extract<StepDraft, { kind: "browser" }>;
const browserAt = (draft: CaseDraft, index: number): BrowserStepDraft => {
  const step = draft.steps[index];
  if (step?.kind !== "browser") throw new Error(`step ${index} is not a browser step`);
  return step;
};
const stepsOf = (draft: CaseDraft) => {
  const { value, problems } = caseOfDraft(draft);
  expect([...problems.values()]).to.deep.equal([]);
  return value.steps.map((step) => toJson(StepSchema, step));
};

describe("console editor: browser steps", () => {
  it("reads every action, locator, check and state into the form and writes back the same messages", () => {
    const draft = caseDraft();
    expect(draft.recordTrace).to.equal(true);
    expect(stepsOf(draft)).to.deep.equal(stepsJson);
    expect(caseOfDraft(draft).value.recordTrace).to.equal(true);
    // As the form shows them.
    expect(browserAt(draft, 1).draft).to.deep.include({ action: "fill", fillValue: "{{DEMO_USER}}" });
    expect(browserAt(draft, 1).draft.locator).to.deep.equal({
      by: "label",
      value: "Email",
      name: "",
      exact: true,
      nth: "",
    });
    expect(browserAt(draft, 5).draft).to.deep.include({ action: "press", pressOnElement: true, key: "Tab" });
    expect(browserAt(draft, 7).draft.locator.nth).to.equal("2");
    expect(browserAt(draft, 12).draft).to.deep.include({ waitFor: "url", waitUrl: "/account/**" });
    expect(browserAt(draft, 19).draft).to.deep.include({ check: "count", expected: "3" });
  });

  it("goes through the JSON view (the file format's browser objects) and back unchanged", () => {
    const written = jsonOfDraft(caseDraft());
    if (!("text" in written)) throw new Error("not writable");
    const file = JSON.parse(written.text);
    expect(file.recordTrace).to.equal(true);
    expect(file.steps[1]).to.deep.equal({
      name: "email",
      browser: { fill: { locator: { label: "Email", exact: true }, value: "{{DEMO_USER}}" } },
    });
    const read = draftOfJson(written.text);
    if ("error" in read) throw new Error(read.error);
    expect(read.draft.recordTrace).to.equal(true);
    expect(stepsOf(read.draft)).to.deep.equal(stepsJson);
  });

  it("sends only the chosen action's fields, keeping the others' texts while another action is chosen", () => {
    const draft = caseDraft([
      { name: "submit", browser: { click: { locator: { role: "button", name: "Go" } } } },
    ]);
    const step = browserAt(draft, 0);
    step.draft.action = "goto";
    step.draft.gotoUrl = "/start";
    expect(stepsOf(draft)).to.deep.equal([{ name: "submit", browser: { goto: { url: "/start" } } }]);
    step.draft.action = "expect";
    step.draft.check = "title";
    step.draft.expected = "Shop";
    // A page check carries no element.
    expect(stepsOf(draft)).to.deep.equal([{ name: "submit", browser: { expect: { title: "Shop" } } }]);
    step.draft.check = "visible";
    expect(stepsOf(draft)).to.deep.equal([
      { name: "submit", browser: { expect: { locator: { role: "button", name: "Go" }, visible: true } } },
    ]);
    step.draft.action = "press";
    step.draft.key = "Enter";
    expect(stepsOf(draft)).to.deep.equal([{ name: "submit", browser: { press: { key: "Enter" } } }]);
    step.draft.action = "click";
    expect(stepsOf(draft)).to.deep.equal([
      { name: "submit", browser: { click: { locator: { role: "button", name: "Go" } } } },
    ]);
  });

  it("says what the form cannot read as a number at its field, and sends nothing", () => {
    const draft = caseDraft([
      { name: "a", browser: { click: { locator: { text: "Go" } } } },
      { name: "b", browser: { expect: { locator: { css: "li" }, count: 1 } } },
    ]);
    const [click, count] = [browserAt(draft, 0), browserAt(draft, 1)];
    click.draft.locator.nth = "second";
    click.draft.timeoutMs = "5 s";
    count.draft.expected = "";
    const { problems } = caseOfDraft(draft);
    expect(Object.fromEntries(problems)).to.deep.equal({
      [`${click.key}:locator.nth`]: "Must be a whole number: 1 for the first match, 2 for the second….",
      [`${click.key}:timeoutMs`]: "Must be a whole number of milliseconds, e.g. 5000.",
      [`${count.key}:expect.expected`]: "Enter how many elements must match, e.g. 3 (0 for none).",
    });
  });

  it("changes a step's kind and back without losing what was typed in either", () => {
    const draft = caseDraft([
      { name: "submit", browser: { click: { locator: { role: "button", name: "Go" } } } },
    ]);
    const browser = browserAt(draft, 0);
    const http = withKind(browser, "http");
    expect(http.kind).to.equal("http");
    expect(http.name, "the name stays").to.equal("submit");
    if (http.kind !== "http") throw new Error("not http");
    http.draft.path = "/api/login";
    const back = withKind(http, "browser");
    expect(back.draft).to.deep.equal(browser.draft);
    const again = withKind(back, "http");
    expect(again.draft).to.deep.include({ path: "/api/login" });
    // Only the kind shown is saved; what is set aside is not a change.
    const before = snapshotOf(draft);
    expect(snapshotOf({ ...draft, steps: [back] })).to.equal(before);
    expect(snapshotOf({ ...draft, steps: [again] })).not.to.equal(before);
  });

  it("puts every path the catalog names under steps[i].browser at its field", () => {
    const draft = caseDraft();
    const key = (index: number) => draft.steps[index]?.key;
    const cases: [string, string][] = [
      ["steps[0].browser", `${key(0)}:action`],
      ["steps[0].browser.goto.url", `${key(0)}:goto.url`],
      ["steps[0].browser.timeout_ms", `${key(0)}:timeoutMs`],
      ["steps.steps[3].browser.timeout_ms", `${key(3)}:timeoutMs`],
      ["steps[1].browser.fill.locator", `${key(1)}:locator.value`],
      ["steps[1].browser.fill.locator.label", `${key(1)}:locator.value`],
      ["steps[1].browser.fill.value", `${key(1)}:fill.value`],
      ["steps[3].browser.click.locator.role", `${key(3)}:locator.value`],
      ["steps[3].browser.click.locator.name", `${key(3)}:locator.name`],
      ["steps[7].browser.check.locator.nth", `${key(7)}:locator.nth`],
      ["steps[5].browser.press.key", `${key(5)}:press.key`],
      ["steps[5].browser.press.locator.test_id", `${key(5)}:locator.value`],
      ["steps[6].browser.select.options", `${key(6)}:select.options`],
      ["steps[6].browser.select.options[1]", `${key(6)}:select.options#1`],
      ["steps[6].browser.select.locator.css", `${key(6)}:locator.value`],
      ["steps[8].browser.uncheck.locator", `${key(8)}:locator.value`],
      ["steps[9].browser.hover.locator.text", `${key(9)}:locator.value`],
      ["steps[10].browser.wait_for", `${key(10)}:waitFor.mode`],
      ["steps[10].browser.wait_for.state", `${key(10)}:waitFor.state`],
      ["steps[12].browser.wait_for.url", `${key(12)}:waitFor.url`],
      ["steps[13].browser.wait_for.text", `${key(13)}:waitFor.text`],
      ["steps[14].browser.expect", `${key(14)}:expect.check`],
      ["steps[14].browser.expect.visible", `${key(14)}:expect.check`],
      ["steps[14].browser.expect.locator", `${key(14)}:locator.value`],
      ["steps[16].browser.expect.text", `${key(16)}:expect.expected`],
      ["steps[19].browser.expect.count", `${key(19)}:expect.expected`],
      ["steps[20].browser.expect.url", `${key(20)}:expect.expected`],
      ["steps[21].browser.expect.title", `${key(21)}:expect.expected`],
      ["steps[22].browser.screenshot.name", `${key(22)}:screenshot.name`],
      ["steps[2].name", `${key(2)}:name`],
      // A browser step named as another kind: at its name, as for any step of a changed kind.
      ["steps[2].http.request.path", `${key(2)}:name`],
    ];
    for (const [path, field] of cases) expect(fieldOfPath(path, draft), path).to.deep.equal({ field });
    expect(fieldOfPath("steps[3].browser.click.locator.role.extra", draft)).to.equal(undefined);
  });

  it("keeps a locator's error while the same kind of locator holds the same text", () => {
    const sent = caseDraft([{ name: "submit", browser: { click: { locator: { role: "Button" } } } }]);
    const key = sent.steps[0]?.key;
    const messages = new Map([[`${key}:locator.value`, "not an ARIA role"]]);
    const current = structuredClone(sent);
    const step = browserAt(current, 0);
    expect(stillAtSentValues(messages, sent, current).size).to.equal(1);
    step.draft.locator.by = "label";
    expect(stillAtSentValues(messages, sent, current).size, "a label may be Button").to.equal(0);
    step.draft.locator.by = "role";
    expect(stillAtSentValues(messages, sent, current).size).to.equal(1);
    step.draft.locator.value = "button";
    expect(stillAtSentValues(messages, sent, current).size).to.equal(0);
  });

  it("checks {{NAME}} where the executor interpolates, never in a screenshot's name", () => {
    const draft = caseDraft([
      {
        name: "log in",
        http: { request: { method: "POST", path: "/api/login" }, save: { token: "$.token" } },
      },
      { name: "open", browser: { goto: { url: "/welcome/{{token}}" } } },
      { name: "email", browser: { fill: { locator: { label: "{{FIELD}}" }, value: "{{DEMO_USR}}" } } },
      {
        name: "plan",
        browser: { select: { locator: { css: "select" }, options: ["{{PLAN}}", "{{ plan }}"] } },
      },
      { name: "{{SHOT}}", browser: { screenshot: { name: "{{SHOT}}" } } },
    ]);
    // {{token}}, saved by the HTTP step before it, is known; {{SHOT}} is in names only.
    const [, , email, plan] = draft.steps.map((step) => step.key);
    const unknown = (name: string) =>
      `{{${name}}} is not a project variable or a value saved by an earlier step: the step fails unless a variable named ${name} is added before the test runs.`;
    expect(Object.fromEntries(referenceWarnings(draft, ["DEMO_USER", "PLAN"]))).to.deep.equal({
      [`${email}:locator.value`]: unknown("FIELD"),
      [`${email}:fill.value`]: unknown("DEMO_USR"),
      [`${plan}:select.options#1`]:
        "{{ plan }} is sent as written: a reference is {{NAME}}, letters, digits and _ without spaces.",
    });
  });

  it("heads each step with one line, as the test case page says it", () => {
    const draft = caseDraft();
    const said = draft.steps.map((step) => logicOf(step).summary(step.draft));
    expect(said.slice(0, 8)).to.deep.equal([
      "goto /login?next={{NEXT}}",
      "fill getByLabel('Email', { exact: true }) · Types “{{DEMO_USER}}”",
      "fill getByPlaceholder('Search…') · Clears it",
      "click getByRole('button', { name: 'Sign in' })",
      "press Enter · On the element that has the focus",
      "press Tab · On getByTestId('search')",
      "select locator('select#plan') · Chooses “Pro”, “Yearly”",
      "check getByRole('checkbox', { name: 'I agree' }).nth(1)",
    ]);
    // What the form holds, even before it is saved.
    const submit = browserAt(draft, 3);
    submit.draft.locator.name = "Log in";
    expect(logicOf(submit).summary(submit.draft)).to.equal("click getByRole('button', { name: 'Log in' })");
  });
});
