// Browser steps written to a real catalog over real gRPC: every action stored and read back as
// written, every rule of step.proto's BrowserStep and Locator refused at its field's path.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { parseTestCaseFile } from "@testrun/content-file";
import { type Step, StepSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
import { FieldViolationsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import {
  type Catalog,
  httpStep,
  type InProcessCatalog,
  member,
  newProject,
  rejects,
  repoRoot,
  seedOrganization,
  startInProcessCatalog,
} from "@testrun/testing";
import { expect } from "chai";

/** A step from its proto JSON (what the file format's `browser` object is). */
const step = (json: unknown): Step => fromJson(StepSchema, json as JsonValue);
const browser = (name: string, json: unknown): Step => step({ name, browser: json });

/** A valid browser test case of every action, and of every locator form. */
const everyAction = [
  step({
    name: "log in by API",
    http: { request: { method: "POST", path: "/api/login" }, save: { link: "$.next" } },
  }),
  browser("open sign-in", { goto: { url: "/login?next=%2Fhome" } }),
  browser("open absolute", { goto: { url: "https://shop.example/welcome" } }),
  browser("open saved link", { goto: { url: "{{link}}" }, timeoutMs: 30000 }),
  browser("email", { fill: { locator: { label: "Email" }, value: "{{EMAIL}}" } }),
  browser("clear", { fill: { locator: { placeholder: "Search", exact: true } } }),
  browser("submit", {
    click: { locator: { role: "button", name: "Sign in", exact: true } },
    timeoutMs: 5000,
  }),
  browser("variable role", { click: { locator: { role: "{{ROLE}}", name: "{{LABEL}}" } } }),
  browser("second link", { click: { locator: { text: "More", nth: 2 } } }),
  browser("enter", { press: { locator: { css: "input[name=q]" }, key: "Enter" } }),
  browser("tab", { press: { key: "Tab" } }),
  browser("country", { select: { locator: { testId: "country" }, options: ["de", "France"] } }),
  browser("terms", { check: { locator: { role: "checkbox", name: "I agree" } } }),
  browser("news", { uncheck: { locator: { label: "Newsletter" } } }),
  browser("menu", { hover: { locator: { css: "nav > .menu" } } }),
  browser("spinner gone", { waitFor: { locator: { testId: "spinner" }, state: "ELEMENT_STATE_DETACHED" } }),
  browser("dialog", { waitFor: { locator: { role: "dialog" } } }),
  browser("at home", { waitFor: { url: "**/home" } }),
  browser("greeting", { waitFor: { text: "Welcome back" } }),
  browser("visible", { expect: { locator: { testId: "greeting" }, visible: true } }),
  browser("hidden", { expect: { locator: { text: "Error" }, hidden: true } }),
  browser("text", { expect: { locator: { testId: "greeting" }, text: "Hello {{NAME}}" } }),
  browser("value", { expect: { locator: { label: "Email" }, value: "" } }),
  browser("count", { expect: { locator: { role: "listitem" }, count: 0 } }),
  browser("url", { expect: { url: "/home" } }),
  browser("title", { expect: { title: "Shop" } }),
  browser("home", { screenshot: { name: "home page-1.png", fullPage: true } }),
  browser("viewport", { screenshot: { name: "Viewport" } }),
];

describe("catalog: browser steps", () => {
  let h: InProcessCatalog;
  let catalog: Catalog;
  let seed: Awaited<ReturnType<typeof seedOrganization>>;
  let editor: Actor;

  before(async () => {
    h = await startInProcessCatalog();
    catalog = h.catalog;
    seed = await seedOrganization(catalog);
    editor = member(seed.members.editor);
  });
  after(async () => {
    await h.stop();
  });

  const project = () => newProject(catalog, seed.orgId);

  /** The violations of a refused CreateTestCase of `steps`, as `field: description`. */
  async function refusals(steps: Step[], projectId?: string): Promise<string[]> {
    const error = await rejects(
      catalog.createTestCase({ actor: editor, projectId: projectId ?? (await project()), name: "t", steps }),
      Code.InvalidArgument,
    );
    return error
      .findDetails(FieldViolationsSchema)
      .flatMap((d) => d.violations.map((v) => `${v.field}: ${v.description}`));
  }
  /** The paths alone. */
  const fields = async (steps: Step[]) => (await refusals(steps)).map((v) => v.slice(0, v.indexOf(": ")));

  it("store a test case of every action and locator form, mixed with HTTP, and read it back exactly", async () => {
    const projectId = await project();
    const { testCase } = await catalog.createTestCase({
      actor: editor,
      projectId,
      name: "browser journey",
      steps: everyAction,
    });
    const written = everyAction.map((s) => toJson(StepSchema, s));
    expect(testCase?.steps.map((s) => toJson(StepSchema, s))).to.deep.equal(written);
    const read = await catalog.getTestCase({ actor: editor, projectId, testCaseId: testCase?.id });
    expect(read.testCase?.steps.map((s) => toJson(StepSchema, s))).to.deep.equal(written);
    const listed = await catalog.listTestCases({ actor: editor, projectId, includeSteps: true });
    expect(listed.testCases[0]?.steps.map((s) => toJson(StepSchema, s))).to.deep.equal(written);
    // {{NAME}} in a browser step counts as a use of the variable.
    const using = await catalog.listTestCases({ actor: editor, projectId, usesVariable: "EMAIL" });
    expect(using.testCases.map((t) => t.name)).to.deep.equal(["browser journey"]);
  });

  it("take the example of docs/runs.md (Browser steps) as it is written there", async () => {
    const docs = readFileSync(join(repoRoot, "docs", "runs.md"), "utf8");
    const section = docs.slice(docs.indexOf("### Browser steps"));
    const yaml = /```yaml\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
    const [example] = parseTestCaseFile(yaml, "yaml");
    expect(example?.steps.filter((s) => s.kind.case === "browser")).to.have.length(20);
    const projectId = await project();
    const { testCase } = await catalog.createTestCase({
      actor: editor,
      projectId,
      name: example?.name,
      steps: example?.steps,
      recordTrace: example?.recordTrace,
    });
    expect(testCase).to.include({ name: "sign in in the browser", recordTrace: true });
  });

  it("refuse a step without a kind, and a browser step without an action, naming the step", async () => {
    expect(await refusals([step({ name: "nothing" }), browser("idle", { timeoutMs: 5 })])).to.deep.equal([
      "steps[0]: needs a kind: http (a request to send) or browser (an action on the test's page)",
      "steps[1].browser: needs an action: one of goto, click, fill, press, select, check, uncheck, hover, wait_for, expect, screenshot",
    ]);
  });

  it("refuse goto URLs that are neither a path under the base URL nor an absolute http(s) URL", async () => {
    const goto = (url: string) => browser("go", { goto: { url } });
    const found = await refusals([
      goto(""),
      goto("login"),
      goto("file:///etc/passwd"),
      goto("javascript:alert(1)"),
      goto("https://"),
      goto("/a b"),
      goto(`/${"a".repeat(2048)}`),
      goto("http://{{HOST}}/ok"),
    ]);
    const rule =
      'a path starting with "/" (under the environment\'s base URL) or an absolute http:// or https:// URL';
    expect(found).to.deep.equal([
      `steps[0].browser.goto.url: is required: ${rule}`,
      `steps[1].browser.goto.url: must be ${rule}`,
      `steps[2].browser.goto.url: must be ${rule}`,
      `steps[3].browser.goto.url: must be ${rule}`,
      `steps[4].browser.goto.url: must be ${rule}: this one has no host`,
      "steps[5].browser.goto.url: must not contain spaces or control characters",
      "steps[6].browser.goto.url: must be at most 2048 characters",
    ]);
  });

  it("refuse locators that break its rules, at the locator's field", async () => {
    const click = (locator: unknown) => browser("c", { click: { locator } });
    const found = await refusals([
      browser("c", { click: {} }),
      click({}),
      click({ role: "" }),
      click({ role: "Button", name: "OK" }),
      click({ role: "knob" }),
      click({ text: "x".repeat(2001) }),
      click({ label: "Email", name: "Email" }),
      click({ css: "a", nth: -1 }),
      click({ testId: "a", nth: 1001 }),
      click({ role: "button", name: "n".repeat(2001) }),
    ]);
    expect(found).to.deep.equal([
      "steps[0].browser.click.locator: is required: the element, found by role, label, text, placeholder, test_id or css",
      "steps[1].browser.click.locator: needs one of role, label, text, placeholder, test_id or css",
      "steps[2].browser.click.locator.role: must not be empty",
      'steps[3].browser.click.locator.role: "Button" is not an ARIA role: roles are lower case ("button")',
      'steps[4].browser.click.locator.role: "knob" is not an ARIA role Playwright\'s getByRole knows (button, link, textbox, checkbox, heading, …)',
      "steps[5].browser.click.locator.text: must be at most 2000 characters",
      "steps[6].browser.click.locator.name: is for role locators only (the accessible name of the element with that role); a label locator matches its own text",
      "steps[7].browser.click.locator.nth: must be 0 (exactly one element must match) or 1 to 1000 (the first, second, … of those that match)",
      "steps[8].browser.click.locator.nth: must be 0 (exactly one element must match) or 1 to 1000 (the first, second, … of those that match)",
      "steps[9].browser.click.locator.name: must be at most 2000 characters",
    ]);
  });

  it("check every action's own fields and bounds", async () => {
    const role = { role: "button" };
    expect(
      await fields([
        browser("a", { check: {} }),
        browser("a", { uncheck: { locator: {} } }),
        browser("a", { hover: { locator: { css: "" } } }),
        browser("a", { fill: { value: "x" } }),
        browser("a", { fill: { locator: role, value: "v".repeat(100_001) } }),
        browser("a", { press: { locator: role } }),
        browser("a", { press: { key: "k".repeat(101) } }),
        browser("a", { select: { locator: role } }),
        browser("a", { select: { locator: role, options: Array.from({ length: 101 }, (_, i) => `${i}`) } }),
        browser("a", { select: { options: ["x"] } }),
        browser("a", { click: { locator: role }, timeoutMs: 120_001 }),
        browser("a", { click: { locator: role }, timeoutMs: -1 }),
      ]),
    ).to.deep.equal([
      "steps[0].browser.check.locator",
      "steps[1].browser.uncheck.locator",
      "steps[2].browser.hover.locator.css",
      "steps[3].browser.fill.locator",
      "steps[4].browser.fill.value",
      "steps[5].browser.press.key",
      "steps[6].browser.press.key",
      "steps[7].browser.select.options",
      "steps[8].browser.select.options",
      "steps[9].browser.select.locator",
      "steps[10].browser.timeout_ms",
      "steps[11].browser.timeout_ms",
    ]);
    // A fill may clear an input (empty value), and 100000 characters and 100 options are allowed.
    const projectId = await project();
    await catalog.createTestCase({
      actor: editor,
      projectId,
      name: "at the bounds",
      steps: [
        browser("a", { fill: { locator: role, value: "v".repeat(100_000) } }),
        browser("b", { select: { locator: role, options: Array.from({ length: 100 }, (_, i) => `${i}`) } }),
        browser("c", { click: { locator: { role: "button", nth: 1000 } }, timeoutMs: 120_000 }),
        browser("d", { press: { key: "k".repeat(100) } }),
      ],
    });
  });

  it("check wait_for: one of locator, url and text, a state with a locator only", async () => {
    const found = await refusals([
      browser("w", { waitFor: {} }),
      browser("w", { waitFor: { url: "/a", text: "b" } }),
      browser("w", { waitFor: { locator: { text: "a" }, text: "b" } }),
      browser("w", { waitFor: { url: "/a", state: "ELEMENT_STATE_HIDDEN" } }),
      browser("w", { waitFor: { locator: { text: "a" }, state: 9 } }),
      browser("w", { waitFor: { url: `/${"u".repeat(2048)}` } }),
      browser("w", { waitFor: { locator: {} } }),
    ]);
    expect(found).to.deep.equal([
      "steps[0].browser.wait_for: needs what to wait for: one of locator, url, text",
      "steps[1].browser.wait_for.text: cannot be set together with url: a wait_for waits for one thing",
      "steps[2].browser.wait_for.text: cannot be set together with locator: a wait_for waits for one thing",
      "steps[3].browser.wait_for.state: is for waiting on a locator only",
      "steps[4].browser.wait_for.state: must be ELEMENT_STATE_VISIBLE, ELEMENT_STATE_HIDDEN, ELEMENT_STATE_ATTACHED or ELEMENT_STATE_DETACHED",
      "steps[5].browser.wait_for.url: must be at most 2048 characters",
      "steps[6].browser.wait_for.locator: needs one of role, label, text, placeholder, test_id or css",
    ]);
  });

  it("check expect: one check, a locator exactly where the check needs one, and each check's bounds", async () => {
    const locator = { testId: "t" };
    const found = await refusals([
      browser("e", { expect: { locator } }),
      browser("e", { expect: { visible: true } }),
      browser("e", { expect: { locator, url: "/a" } }),
      browser("e", { expect: { locator, title: "t" } }),
      browser("e", { expect: { locator, visible: false } }),
      browser("e", { expect: { locator, hidden: false } }),
      browser("e", { expect: { locator, text: "" } }),
      browser("e", { expect: { locator, text: "t".repeat(10_001) } }),
      browser("e", { expect: { locator, value: "v".repeat(10_001) } }),
      browser("e", { expect: { locator, count: 10_001 } }),
      browser("e", { expect: { locator, count: -1 } }),
      browser("e", { expect: { url: "" } }),
      browser("e", { expect: { url: "/a b" } }),
      browser("e", { expect: { title: "" } }),
      browser("e", { expect: { title: "t".repeat(1001) } }),
    ]);
    expect(found).to.deep.equal([
      "steps[0].browser.expect: needs one check: visible, hidden, text, value, count, url or title",
      "steps[1].browser.expect.locator: is required: the element, found by role, label, text, placeholder, test_id or css",
      "steps[2].browser.expect.locator: is not allowed with url: that checks the page, not an element",
      "steps[3].browser.expect.locator: is not allowed with title: that checks the page, not an element",
      "steps[4].browser.expect.visible: must be true (to check the opposite, use hidden: true)",
      "steps[5].browser.expect.hidden: must be true (to check the opposite, use visible: true)",
      "steps[6].browser.expect.text: must not be empty (every element's text contains it)",
      "steps[7].browser.expect.text: must be at most 10000 characters",
      "steps[8].browser.expect.value: must be at most 10000 characters",
      "steps[9].browser.expect.count: must be 0 to 10000",
      "steps[10].browser.expect.count: must be 0 to 10000",
      "steps[11].browser.expect.url: must not be empty",
      "steps[12].browser.expect.url: must not contain spaces or control characters",
      "steps[13].browser.expect.title: must not be empty (every title contains it)",
      "steps[14].browser.expect.title: must be at most 1000 characters",
    ]);
  });

  it("give each screenshot of a test case its own name of the allowed characters", async () => {
    const shot = (name: string) => browser("s", { screenshot: { name } });
    const found = await refusals([
      shot("home"),
      shot(""),
      shot("a/b"),
      shot("{{PAGE}}"),
      shot("n".repeat(101)),
      shot("Home"),
      step({ name: "again", browser: { screenshot: { name: "home" } } }),
    ]);
    const rule = "must be 1 to 100 characters of letters, digits, space, -, _ and .";
    expect(found).to.deep.equal([
      `steps[1].browser.screenshot.name: ${rule}`,
      `steps[2].browser.screenshot.name: ${rule}`,
      `steps[3].browser.screenshot.name: ${rule} ({{NAME}} is not allowed in a name)`,
      `steps[4].browser.screenshot.name: ${rule}`,
      'steps[5].browser.screenshot.name: "Home" is already the name of the screenshot at steps[0].browser.screenshot.name: each screenshot of a test case needs its own name (ignoring letter case)',
      'steps[6].browser.screenshot.name: "home" is already the name of the screenshot at steps[0].browser.screenshot.name: each screenshot of a test case needs its own name (ignoring letter case)',
    ]);
    // Two test cases may each have a screenshot of the same name.
    const projectId = await project();
    for (const name of ["one", "two"])
      await catalog.createTestCase({ actor: editor, projectId, name, steps: [shot("home")] });
  });

  it("refuse a bad browser step of an update or an import at the request's path, writing nothing", async () => {
    const projectId = await project();
    const { testCase } = await catalog.createTestCase({
      actor: editor,
      projectId,
      name: "t",
      steps: [httpStep()],
    });
    const bad = browser("b", { click: { locator: { role: "knob" } } });
    const update = await rejects(
      catalog.updateTestCase({ actor: editor, projectId, testCaseId: testCase?.id, steps: { steps: [bad] } }),
      Code.InvalidArgument,
    );
    expect(update.findDetails(FieldViolationsSchema)[0]?.violations.map((v) => v.field)).to.deep.equal([
      "steps.steps[0].browser.click.locator.role",
    ]);
    const imported = await rejects(
      catalog.importContent({
        actor: editor,
        projectId,
        testCases: [{ name: "new", steps: [browser("ok", { goto: { url: "/" } }), bad] }],
      }),
      Code.InvalidArgument,
    );
    expect(imported.findDetails(FieldViolationsSchema)[0]?.violations.map((v) => v.field)).to.deep.equal([
      "test_cases[0].steps[1].browser.click.locator.role",
    ]);
    const { testCases } = await catalog.listTestCases({ actor: editor, projectId, includeSteps: true });
    expect(testCases.map((t) => [t.name, t.version, t.steps[0]?.kind.case])).to.deep.equal([
      ["t", 1, "http"],
    ]);
  });
});
