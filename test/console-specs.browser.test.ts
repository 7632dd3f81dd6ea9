// Playwright spec cases in the console, in a real browser against the whole system (issue 42): a
// spec case's page shows its spec and helper files with syntax highlighting; an Editor changes the
// source and saves it as a new version; a Viewer reads it and cannot change it; an Editor makes a
// new case a spec case, and a spec past its bound is refused naming it. At 1280 and 390 px; every
// page saved under .tmp/screenshots.
import { createCliContext } from "@testrun/cli";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { expect } from "chai";
import type { Page } from "playwright-core";
import { shot, viewports } from "./browser.js";
import { consoleBrowserSuite } from "./console-browser-suite.js";

const specSource = `import { test, expect } from "@playwright/test";
import { LoginPage } from "../pages/login";

test("logs in", async ({ page }) => {
  const login = new LoginPage(page);
  await login.open();
  await expect(page.getByRole("heading", { name: "Welcome" })).toBeVisible();
});
`;
const helperSource = `export class LoginPage {
  constructor(private readonly page) {}
  async open() {
    await this.page.goto("/login");
  }
}
`;

describe("console Playwright spec cases in a browser", function () {
  this.timeout(120_000);
  const suite = consoleBrowserSuite("Acme specs", { credits: 10 });
  const px = (width: keyof typeof viewports) => viewports[width].width;
  let viewerId: string;

  before(async () => {
    viewerId = (await suite.member("vera@acme-specs.example", Role.VIEWER)).id;
  });

  const newSpecCase = async (name: string) => {
    const { system, project } = suite;
    const ctx = createCliContext(system.env);
    const { testCase } = await ctx.catalog.createTestCase({
      actor: { kind: { case: "memberId", value: project.ownerId } },
      projectId: project.projectId,
      name,
      playwright: {
        spec: { path: "tests/login.spec.ts", source: specSource },
        files: [{ path: "pages/login.ts", source: helperSource }],
      },
    });
    return testCase?.id ?? "";
  };
  const casePath = (id: string) =>
    `${suite.system.consoleUrl}/projects/${suite.project.projectId}/test-cases/${id}`;
  const editorOf = (page: Page) => page.locator(".code-view .cm-content");
  /** The highlighted tokens CodeMirror drew in the source (spans its highlight style styles). */
  const highlighted = (page: Page) =>
    page.locator(".code-view .cm-line span").evaluateAll((spans) => {
      // The page's window (the tests' TypeScript has no DOM library to name it).
      const view = globalThis as unknown as { getComputedStyle(element: unknown): { color: string } };
      return spans.map((span) => ({
        text: span.textContent ?? "",
        color: view.getComputedStyle(span).color,
      }));
    });

  for (const width of ["wide", "narrow"] as const) {
    it(`shows a spec case's files highlighted, and an Editor saves a change as a new version (${px(width)} px)`, async () => {
      const id = await newSpecCase(`Log in (${width})`);
      const page = await suite.signedIn(width, suite.project.ownerId);
      await page.goto(casePath(id));
      await page.getByRole("heading", { name: "Playwright spec", level: 2 }).waitFor();
      const source = editorOf(page);
      await source.waitFor();
      expect(await source.getAttribute("aria-label")).to.equal("Source of tests/login.spec.ts");
      expect(await source.getAttribute("contenteditable")).to.equal("true");
      expect(await source.innerText()).to.include('test("logs in", async ({ page }) => {');
      // Keywords and strings are drawn in colours of their own.
      const tokens = await highlighted(page);
      const colorOf = (text: string) => tokens.find((token) => token.text === text)?.color;
      expect(colorOf("import"), "a keyword is highlighted").to.be.a("string");
      expect(colorOf('"@playwright/test"'), "a string is highlighted").to.be.a("string");
      expect(colorOf("import")).to.not.equal(colorOf('"@playwright/test"'));
      expect(await page.getByRole("button", { name: "Save spec" }).isDisabled()).to.equal(true);
      await shot(page, "spec-case", width);

      // The helper file, by its tab.
      await page.getByRole("tab", { name: "pages/login.ts" }).click();
      await page.locator(".code-view .cm-content", { hasText: "class LoginPage" }).waitFor();
      expect(await source.getAttribute("aria-label")).to.equal("Source of pages/login.ts");
      await shot(page, "spec-case-helper", width);

      // Back to the spec; a line added at its end, saved.
      await page.getByRole("tab", { name: "tests/login.spec.ts" }).click();
      await source.click();
      await page.keyboard.press("ControlOrMeta+End");
      await page.keyboard.type("// checked by the console test\n");
      await page.getByRole("button", { name: "Save spec" }).click();
      await page.getByText("Spec saved as version 2.").waitFor();
      // The page shows the version saved, with nothing left to save.
      expect(await source.innerText()).to.include("// checked by the console test");
      expect(await page.getByRole("button", { name: "Save spec" }).isDisabled()).to.equal(true);
      expect(await page.getByRole("button", { name: "Discard changes" }).count()).to.equal(0);
      expect(await page.locator(".version-line").textContent()).to.match(/^Version 2 · /);
      const { testCase } = await createCliContext(suite.system.env).catalog.getTestCase({
        actor: { kind: { case: "memberId", value: suite.project.ownerId } },
        projectId: suite.project.projectId,
        testCaseId: id,
      });
      expect(testCase?.playwright?.spec?.source).to.equal(`${specSource}// checked by the console test\n`);
      expect(testCase?.playwright?.files[0]?.source).to.equal(helperSource);
      await shot(page, "spec-case-saved", width);
    });

    it(`shows a Viewer the spec read-only, without a way to change it (${px(width)} px)`, async () => {
      const id = await newSpecCase(`Read only (${width})`);
      const page = await suite.signedIn(width, viewerId);
      await page.goto(casePath(id));
      const source = editorOf(page);
      await source.waitFor();
      expect(await source.getAttribute("contenteditable")).to.equal("false");
      await source.click();
      await page.keyboard.type("nope");
      expect(await source.innerText()).to.not.include("nope");
      expect(await page.getByRole("button", { name: "Save spec" }).count()).to.equal(0);
      expect(await page.locator(".page-actions").count(), "no Edit, Duplicate or Delete").to.equal(0);
      await shot(page, "spec-case-viewer", width);
    });

    it(`makes a new case a spec case, refusing a source past 256 KiB by its bound (${px(width)} px)`, async () => {
      const page = await suite.signedIn(width, suite.project.ownerId);
      await page.goto(`${suite.system.consoleUrl}/projects/${suite.project.projectId}/test-cases`);
      await page.getByRole("link", { name: "New Playwright spec" }).click();
      await page.getByRole("heading", { name: "New Playwright spec", level: 1 }).waitFor();
      await page.getByLabel("Name").fill(`Home page (${width})`);
      await page.getByLabel("Spec file").fill(`tests/home-${width}.spec.ts`);
      await shot(page, "spec-case-new", width);

      // Past the bound: 256 KiB of source and one byte more.
      const source = editorOf(page);
      await source.click();
      await page.keyboard.press("ControlOrMeta+End");
      // The template and a comment of 256 KiB: past the bound whatever the template's length.
      await page.keyboard.insertText(`//${"x".repeat(256 * 1024)}`);
      await page.getByRole("button", { name: "Create spec case" }).click();
      const refusal = page.getByRole("alert");
      await refusal.waitFor();
      expect(await refusal.textContent()).to.match(/^Source: must be at most 256 KiB \(got \d+ bytes\)$/);
      await shot(page, "spec-case-too-large", width);

      // Within it: created, and its page shows the spec.
      await source.click();
      await page.keyboard.press("ControlOrMeta+a");
      await page.keyboard.insertText(
        'import { test } from "@playwright/test";\ntest("home", async () => {});\n',
      );
      await page.getByRole("button", { name: "Create spec case" }).click();
      await page.getByRole("heading", { name: `Home page (${width})`, level: 1 }).waitFor();
      await page.getByText(`tests/home-${width}.spec.ts`).waitFor();
      expect(await editorOf(page).innerText()).to.include('test("home", async () => {});');
      await shot(page, "spec-case-created", width);
    });
  }
});
