// A project's test cases and plans as one file in the console, in a real browser against the whole
// system: an Editor exports the project and imports the same file back (everything unchanged,
// nothing to apply), then a changed copy (previewed item by item, applied, the new test case
// listed); the export imported into another project creates its items there, its environments
// and its variables without values, which the console then names as still to set; an import with
// one bad item shows that item's problems beside it and cannot be applied, and changes nothing; a
// Viewer may export but sees no Import, and the catalog refuses the Viewer's ImportContent. At 1280
// and 390 px; every dialog state saved under .tmp/screenshots.
import { readFile } from "node:fs/promises";
import { Code } from "@connectrpc/connect";
import { createCliContext, createEnvironment, createTestPlan, setVariable } from "@testrun/cli";
import { fileFieldPath, importItemsOf, readContentDocument } from "@testrun/content-file";
import { ImportContentResponseSchema, ItemOutcome, Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Step } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { FieldViolationsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import { expect } from "chai";
import type { Locator, Page } from "playwright-core";
import type { System } from "../scripts/system.js";
import { horizontalOverflow, screenshot, viewports } from "./browser.js";
import { consoleBrowserSuite } from "./console-browser-suite.js";
import { consoleClient, refusal, signIn } from "./console-client.js";
import { addCases, getCase, newProject } from "./pipeline.js";

describe("console: test cases and plans as a file (export, import) in a browser", function () {
  this.timeout(120_000);
  const suite = consoleBrowserSuite("Acme content", { credits: 0 });
  const { signedIn, member } = suite;
  let system: System;
  before(() => {
    ({ system } = suite);
  });
  const px = (width: keyof typeof viewports) => viewports[width].width;
  /** Saves the page and checks nothing overflows sideways. */
  const shot = async (page: Page, name: string, width: keyof typeof viewports) => {
    await screenshot(page, `${name}-${px(width)}`);
    expect(await horizontalOverflow(page), `${name} overflows`).to.be.at.most(0);
  };
  /** A project of its own with two test cases and a plan, and its owner's signed-in page. */
  const projectWithContent = async (name: string, width: keyof typeof viewports) => {
    const project = await newProject(system, name, { credits: 0 });
    const [login, health] = await addCases(
      system,
      project.projectId,
      getCase("Log in", "smoke", "/login") + getCase("Health", "smoke", "/health"),
    );
    await createTestPlan(createCliContext(system.env), {
      projectId: project.projectId,
      name: "Smoke",
      testCases: [health?.id ?? "", login?.id ?? ""],
    });
    const page = await signedIn(width, project.ownerId);
    await page.goto(`${system.consoleUrl}/projects/${project.projectId}/test-cases`);
    await page.getByRole("row", { name: /Log in/ }).waitFor();
    return { ...project, page, login, health };
  };
  const problemsOf = (dialog: Locator, path: string) =>
    dialog
      .getByRole("list", { name: `Problems of ${path}` })
      .getByRole("listitem")
      .allTextContents();

  for (const width of ["wide", "narrow"] as const) {
    it(`an Editor exports, imports the same file (nothing to do), then a changed copy: previewed, applied, listed (${px(width)} px)`, async () => {
      const { page, projectId, ownerId, login, health } = await projectWithContent(`Content ${width}`, width);
      await shot(page, "test-cases-export-import", width);

      await page.getByRole("button", { name: "Export" }).click();
      const exporting = page.getByRole("dialog", { name: "Export test cases and plans" });
      await exporting.getByText("2 test cases, 1 test plan and 1 environment").waitFor();
      await shot(page, "content-export", width);
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        exporting.getByRole("button", { name: `Download testrun-content-${width}.yaml` }).click(),
      ]);
      expect(download.suggestedFilename()).to.equal(`testrun-content-${width}.yaml`);
      const text = await readFile((await download.path()) ?? "", "utf8");
      const document = readContentDocument(text, "yaml");
      expect(document.testCases.map((c) => [c.id, c.name])).to.deep.equal([
        [login?.id, "Log in"],
        [health?.id, "Health"],
      ]);
      expect(document.testPlans.map((p) => [p.name, p.testCases])).to.deep.equal([
        ["Smoke", ["Health", "Log in"]],
      ]);
      await exporting.waitFor({ state: "hidden" });

      // The same file back: everything is already as in it.
      await page.getByRole("button", { name: "Import" }).click();
      let dialog = page.getByRole("dialog", { name: "Import test cases and plans" });
      await dialog.getByLabel("File").waitFor();
      await shot(page, "content-import-choose", width);
      await dialog.getByLabel("File").setInputFiles({
        name: "testrun.yaml",
        mimeType: "application/yaml",
        buffer: Buffer.from(text),
      });
      await dialog.getByRole("button", { name: "Preview" }).click();
      dialog = page.getByRole("dialog", { name: "Preview of the import" });
      await dialog
        .getByText("Everything in the file is already in the project: there is nothing to import.")
        .waitFor();
      await dialog.getByText("4 items already as in the file, left alone").waitFor();
      expect(await dialog.getByRole("button", { name: "Apply" }).isDisabled()).to.equal(true);
      expect(
        await dialog
          .getByRole("row", { name: /Log in/ })
          .getByText("Unchanged", { exact: true })
          .count(),
      ).to.equal(1);
      await shot(page, "content-import-unchanged", width);

      // A reviewed change: Log in renamed, a new test case, the plan running it.
      await dialog.getByRole("button", { name: "Choose another file" }).click();
      dialog = page.getByRole("dialog", { name: "Import test cases and plans" });
      const changed = text
        .replace("name: Log in\n", "name: Log in works\n")
        .replace("      - Log in\n", "      - Log in works\n      - Sign up\n")
        .replace(
          "testPlans:",
          "  - name: Sign up\n    tags: [new]\n    steps:\n      - name: sign up\n        http: { method: POST, path: /signup }\ntestPlans:",
        );
      await dialog.getByLabel("File").setInputFiles({
        name: "testrun.yaml",
        mimeType: "application/yaml",
        buffer: Buffer.from(changed),
      });
      await dialog.getByRole("button", { name: "Preview" }).click();
      dialog = page.getByRole("dialog", { name: "Preview of the import" });
      await dialog
        .getByText(
          "Applying creates 1 test case and changes 1 test case and 1 test plan, and leaves 1 environment and 1 test case as they are.",
        )
        .waitFor();
      const renamed = dialog.getByRole("row", { name: /Log in works/ });
      await renamed.getByText("Changed", { exact: true }).waitFor();
      await renamed.getByText("name", { exact: true }).waitFor();
      await dialog
        .getByRole("row", { name: /Sign up/ })
        .getByText("New", { exact: true })
        .waitFor();
      await dialog.getByRole("row", { name: /Smoke/ }).getByText("testCases").waitFor();
      await shot(page, "content-import-preview", width);
      // The preview wrote nothing.
      await page
        .getByRole("row", { name: /Log in/ })
        .first()
        .waitFor();
      expect(await page.locator("main").getByRole("link", { name: "Sign up", exact: true }).count()).to.equal(
        0,
      );

      await dialog.getByRole("button", { name: "Apply" }).click();
      dialog = page.getByRole("dialog", { name: "Imported" });
      await dialog
        .getByText(
          "Created 1 test case. Changed 1 test case and 1 test plan. 2 items were already as in the file.",
        )
        .waitFor();
      await shot(page, "content-import-applied", width);
      await dialog.getByRole("button", { name: "Close" }).click();
      await page.getByRole("link", { name: "Sign up", exact: true }).waitFor();
      // The keyboard is back where it was: on Import.
      expect(await page.evaluate<string>("document.activeElement?.textContent ?? ''")).to.equal("Import");
      await page.getByRole("link", { name: "Log in works", exact: true }).waitFor();
      const owner = consoleClient(system, await signIn(system, ownerId));
      const { testCases, testPlans } = await owner.exportContent({ projectId });
      const signUp = testCases.find((c) => c.name === "Sign up");
      expect(testPlans[0]?.testCaseIds).to.deep.equal([health?.id, login?.id, signUp?.id]);
    });

    it(`another project's export imports as it is: items by name, environments, variables named as still to set (${px(width)} px)`, async () => {
      const source = await projectWithContent(`Moving ${width}`, width);
      const ctx = createCliContext(system.env);
      const secret = `moving-secret-${width}-${Date.now()}`;
      await setVariable(ctx, { projectId: source.projectId, name: "API_TOKEN", value: secret });
      await createEnvironment(ctx, {
        projectId: source.projectId,
        name: "staging",
        baseUrl: "https://staging.example.com",
        isDefault: false,
      });
      const { page: sourcePage } = source;
      await sourcePage.getByRole("button", { name: "Export" }).click();
      const exporting = sourcePage.getByRole("dialog", { name: "Export test cases and plans" });
      await exporting.getByText("2 test cases, 1 test plan, 2 environments and 1 variable name").waitFor();
      const [download] = await Promise.all([
        sourcePage.waitForEvent("download"),
        exporting.getByRole("button", { name: /^Download / }).click(),
      ]);
      const text = await readFile((await download.path()) ?? "", "utf8");
      // Names only: the value is nowhere in the file.
      expect(text).to.not.contain(secret);
      expect(text).to.match(new RegExp(`^project: ${source.projectId}\n`));

      // A new project: the same "demo" environment (matched by name), nothing else.
      const target = await newProject(system, `Moved ${width}`, { credits: 0 });
      const page = await signedIn(width, target.ownerId);
      await page.goto(`${system.consoleUrl}/projects/${target.projectId}/test-cases`);
      await page.getByRole("button", { name: "Import" }).click();
      let dialog = page.getByRole("dialog", { name: "Import test cases and plans" });
      await dialog.getByLabel("File").setInputFiles({
        name: "moving.yaml",
        mimeType: "application/yaml",
        buffer: Buffer.from(text),
      });
      await dialog.getByRole("button", { name: "Preview" }).click();
      dialog = page.getByRole("dialog", { name: "Preview of the import" });
      await dialog.getByText(/^This file comes from another project/).waitFor();
      await dialog
        .getByText(
          "Applying creates 1 environment, 1 variable, 2 test cases and 1 test plan, and leaves 1 environment as it is.",
        )
        .waitFor();
      const variableRow = dialog.getByRole("row", { name: /API_TOKEN/ });
      await variableRow.getByText("New", { exact: true }).waitFor();
      await variableRow.getByText("without a value").waitFor();
      await dialog
        .getByRole("row", { name: /staging/ })
        .getByText("New", { exact: true })
        .waitFor();
      await dialog.getByText(/^1 variable has no value after this import: API_TOKEN\./).waitFor();
      await shot(page, "content-import-other-project", width);

      await dialog.getByRole("button", { name: "Apply" }).click();
      dialog = page.getByRole("dialog", { name: "Imported" });
      await dialog
        .getByText(
          "Created 1 environment, 1 variable, 2 test cases and 1 test plan. 1 item was already as in the file.",
        )
        .waitFor();
      await dialog.getByText(/^1 variable has no value yet: API_TOKEN\./).waitFor();
      await shot(page, "content-import-variables-to-set", width);
      await dialog.getByRole("link", { name: "Set its value on the Variables page" }).click();

      // The Variables page marks it, and takes its first value.
      await page.getByRole("heading", { name: "Variables" }).waitFor();
      await page.getByText(/^1 variable has no value yet: API_TOKEN\./).waitFor();
      const row = page.getByRole("row", { name: /API_TOKEN/ });
      await row.getByText("Not set", { exact: true }).waitFor();
      await shot(page, "variables-not-set", width);
      await row.getByRole("button", { name: "Set value of API_TOKEN" }).click();
      const setting = page.getByRole("dialog", { name: "Value of API_TOKEN" });
      await setting.getByLabel(/^Value/).fill(`target-${secret}`);
      await setting.getByRole("button", { name: "Save value" }).click();
      await page.getByText("Value of API_TOKEN saved. Runs started from now on use it.").waitFor();
      await row.getByText("hidden", { exact: true }).waitFor();
      expect(await page.getByText(/no value yet/).count()).to.equal(0);

      // The target holds the source's items under ids of its own.
      const owner = consoleClient(system, await signIn(system, target.ownerId));
      const moved = await owner.exportContent({ projectId: target.projectId });
      expect(moved.testCases.map((c) => c.name)).to.deep.equal(["Log in", "Health"]);
      expect(moved.testCases.map((c) => c.id)).to.not.include(source.login?.id);
      expect(moved.testPlans[0]?.testCaseIds).to.deep.equal([moved.testCases[1]?.id, moved.testCases[0]?.id]);
      expect(moved.environments.map((e) => [e.name, e.baseUrl, e.isDefault])).to.deep.equal([
        ["demo", system.demoTargetUrl, true],
        ["staging", "https://staging.example.com", false],
      ]);
      expect(moved.variableNames).to.deep.equal(["API_TOKEN"]);
    });

    it(`an import with one bad item shows its problems beside it and cannot be applied; nothing changes (${px(width)} px)`, async () => {
      const { page, projectId, ownerId, login } = await projectWithContent(`Content bad ${width}`, width);
      await page.getByRole("button", { name: "Import" }).click();
      let dialog = page.getByRole("dialog", { name: "Import test cases and plans" });
      const paste = dialog.getByLabel(/Or paste the document/);

      // A shape mistake is found before any call, named by its path in the document.
      await paste.fill("testCases:\n  - name: no steps\n");
      await dialog.getByRole("button", { name: "Preview" }).click();
      await dialog.locator(".field-error").waitFor();
      expect(await dialog.locator(".field-error").textContent()).to.equal("testCases[0].steps: is required");
      expect(await paste.getAttribute("aria-invalid")).to.equal("true");
      await shot(page, "content-import-shape-error", width);

      // Good items and one bad one: the catalog's problems beside that item, the good ones previewed.
      await paste.fill(
        [
          "testCases:",
          `  - id: ${login?.id}`,
          "    name: Log in",
          "    tags: [smoke, auth]",
          "    steps: [{ name: get it, http: { method: GET, path: /login }, expect: { status: 200 } }]",
          "  - name: Broken",
          "    steps: [{ name: fetch, http: { method: FETCH, path: nope } }]",
          "  - name: Fine new one",
          "    steps: [{ name: ok, http: { method: GET, path: /ok } }]",
          "testPlans:",
          "  - name: Smoke",
          "    testCases: [Log in, Nobody]",
        ].join("\n"),
      );
      await dialog.getByRole("button", { name: "Preview" }).click();
      dialog = page.getByRole("dialog", { name: "Preview of the import" });
      await dialog.getByText(/^2 items have problems, listed with each below\./).waitFor();
      expect(await problemsOf(dialog, "testCases[1]")).to.deep.equal([
        "steps[0].http.method must be one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS",
        'steps[0].http.path must start with "/"',
      ]);
      expect(await problemsOf(dialog, "testPlans[0]")).to.deep.equal([
        'testCases[1] "Nobody" is neither the id nor the name of a test case of the project (as this import leaves it)',
      ]);
      // What would happen to the good ones is still said.
      await dialog
        .getByRole("row", { name: /Fine new one/ })
        .getByText("New", { exact: true })
        .waitFor();
      const tagged = dialog.getByRole("row", { name: /Log in/ });
      await tagged.getByText("Changed", { exact: true }).waitFor();
      await tagged.getByText("tags", { exact: true }).waitFor();
      expect(await dialog.getByRole("button", { name: "Apply" }).isDisabled()).to.equal(true);
      await dialog
        .getByText(
          "1 other test case of the project is not in the file: an import never deletes, so it stays as it is.",
        )
        .waitFor();
      await shot(page, "content-import-problems", width);
      await dialog.getByRole("button", { name: "Choose another file" }).click();
      await page
        .getByRole("dialog", { name: "Import test cases and plans" })
        .getByRole("button", { name: "Cancel" })
        .click();

      // Nothing changed.
      const owner = consoleClient(system, await signIn(system, ownerId));
      const { testCases } = await owner.exportContent({ projectId });
      expect(testCases.map((c) => [c.name, c.tags])).to.deep.equal([
        ["Log in", ["smoke"]],
        ["Health", ["smoke"]],
      ]);
    });
  }

  it("a Viewer may export but sees no Import, and ImportContent refuses the Viewer's direct call", async () => {
    const viewer = await member("viewer@content.example", Role.VIEWER);
    const projectId = suite.project.projectId;
    await addCases(system, projectId, getCase("Viewer sees me", "v", "/v"));
    for (const width of ["wide", "narrow"] as const) {
      const page = await signedIn(width, viewer.id);
      await page.goto(`${system.consoleUrl}/projects/${projectId}/test-cases`);
      await page.getByRole("row", { name: /Viewer sees me/ }).waitFor();
      await page.getByRole("button", { name: "Export" }).waitFor();
      expect(await page.getByRole("button", { name: "Import" }).count()).to.equal(0);
      await shot(page, "test-cases-viewer", width);
    }
    const client = consoleClient(system, await signIn(system, viewer.id));
    const exported = await client.exportContent({ projectId });
    expect(exported.testCases.map((c) => c.name)).to.deep.equal(["Viewer sees me"]);
    for (const dryRun of [true, false]) {
      const error = await refusal(
        client.importContent({
          projectId,
          testCases: [{ name: "Sneaky", steps: exported.testCases[0]?.steps }],
          dryRun,
        }),
      );
      expect(error.code).to.equal(Code.PermissionDenied);
      expect(error.rawMessage).to.equal("changing the project needs the EDITOR role or above");
    }
    expect((await client.exportContent({ projectId })).testCases).to.have.length(1);
  });

  it("ImportContent reads more than the API's 1 MiB (up to the catalog's 8 MiB) and names refusals as in the document", async () => {
    const editor = await member("editor@content.example", Role.EDITOR);
    const client = consoleClient(system, await signIn(system, editor.id));
    const projectId = suite.project.projectId;
    // 500 test cases of a 4 KB raw body each: about 2 MiB, past every other method's bound.
    const document = readContentDocument(
      JSON.stringify({
        testCases: Array.from({ length: 500 }, (_, i) => ({
          name: `bulk ${i}`,
          steps: [{ name: "put", http: { method: "PUT", path: `/bulk/${i}`, raw: "x".repeat(4096) } }],
        })),
      }),
      "json",
    );
    const preview = await client.importContent({ projectId, ...importItemsOf(document), dryRun: true });
    expect(preview.result?.testCases.filter((i) => i.outcome === ItemOutcome.CREATED)).to.have.length(500);
    expect(preview.result?.applied).to.equal(false);

    // Applied in a project of its own, then one more: past what one document holds, so no export.
    const bulk = await newProject(system, "Content bulk", { credits: 0 });
    const owner = consoleClient(system, await signIn(system, bulk.ownerId));
    const applied = await owner.importContent({ projectId: bulk.projectId, ...importItemsOf(document) });
    expect(applied.result?.applied).to.equal(true);
    expect((await owner.exportContent({ projectId: bulk.projectId })).testCases).to.have.length(500);
    await addCases(system, bulk.projectId, getCase("one more", "x", "/x"));
    const tooMany = await refusal(owner.exportContent({ projectId: bulk.projectId }));
    expect([tooMany.code, tooMany.rawMessage]).to.deep.equal([
      Code.FailedPrecondition,
      "the project has more than 500 test cases, more than a content document holds",
    ]);

    // Past the catalog's 8 MiB it is refused before being read whole, as every other method is past 1 MiB.
    const cookie = await signIn(system, editor.id);
    const post = (method: string, body: string, withCookie = true) =>
      fetch(`${system.consoleUrl}/api/testrun.console.v1.ConsoleService/${method}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "connect-protocol-version": "1",
          ...(withCookie && { cookie }),
        },
        body,
      });
    const oversized = await post(
      "ImportContent",
      JSON.stringify({ projectId, testCases: [{ name: "x".repeat(8 * 1024 * 1024) }] }),
    );
    expect(((await oversized.json()) as { code: string }).code).to.equal("resource_exhausted");
    // Without a session nothing is read: the larger bound is open to signed-in members only.
    const anonymous = await post("ImportContent", JSON.stringify({ projectId, testCases: [] }), false);
    expect([anonymous.status, ((await anonymous.json()) as { code: string }).code]).to.deep.equal([
      401,
      "unauthenticated",
    ]);
    const listing = await post(
      "ListTestCases",
      JSON.stringify({ projectId, search: "x".repeat(1024 * 1024) }),
    );
    expect(((await listing.json()) as { code: string }).code).to.equal("resource_exhausted");

    const bad = await refusal(
      client.importContent({
        projectId,
        ...importItemsOf(
          readContentDocument(
            "testCases:\n  - name: x\n    steps: [{ name: s, http: { method: GET, path: /x, timeoutMs: -1 } }]\n",
            "yaml",
          ),
        ),
        dryRun: true,
      }),
    );
    expect(bad.code).to.equal(Code.InvalidArgument);
    const fields = bad.findDetails(FieldViolationsSchema).flatMap((d) => d.violations.map((v) => v.field));
    expect(fields).to.deep.equal(["testCases[0].steps[0].http.timeoutMs"]);
    expect(fields[0]).to.equal(fileFieldPath("test_cases[0].steps[0].http.request.timeout_ms"));
    expect(bad.rawMessage).to.equal(
      "testCases[0].steps[0].http.timeoutMs: must be 0 (the default, 10000) or 1 to 120000",
    );
    expect(bad.findDetails(ImportContentResponseSchema)[0]?.testCases.map((i) => i.path)).to.deep.equal([
      "testCases[0]",
    ]);
  });

  it("CreateTestCase and UpdateTestCase read up to the catalog's 8 MiB too: a case with two 1 MiB bodies is saved", async () => {
    const editor = await member("bodies@content.example", Role.EDITOR);
    const cookie = await signIn(system, editor.id);
    const client = consoleClient(system, cookie);
    const projectId = suite.project.projectId;
    // Two raw bodies at the catalog's 1 MiB per step: about 2 MiB, past the API's 1 MiB.
    const upload = (name: string, fill: string) => ({
      name,
      kind: {
        case: "http" as const,
        value: {
          request: {
            method: "PUT",
            path: `/${name}`,
            body: { case: "raw" as const, value: fill.repeat(1024 * 1024) },
          },
        },
      },
    });
    const { testCase } = await client.createTestCase({
      projectId,
      name: "Two uploads",
      steps: [upload("a", "a"), upload("b", "b")],
    });
    const rawOf = (step: Step) => {
      const body = step?.kind.case === "http" ? step.kind.value.request?.body : undefined;
      return body?.case === "raw" ? body.value : "";
    };
    let { steps } = (await client.getTestCase({ projectId, testCaseId: testCase?.id ?? "" })).testCase ?? {
      steps: [],
    };
    expect(steps.map((step) => rawOf(step).length)).to.deep.equal([1024 * 1024, 1024 * 1024]);
    const updated = await client.updateTestCase({
      projectId,
      testCaseId: testCase?.id ?? "",
      steps: { steps: [upload("c", "c"), upload("a", "a")] },
      expectedVersion: testCase?.version ?? 0,
    });
    ({ steps } = updated.testCase ?? { steps: [] });
    expect(steps.map((step) => rawOf(step).slice(0, 1))).to.deep.equal(["c", "a"]);

    // Past the catalog's 8 MiB each is refused before being read whole.
    const post = (method: string, body: string, withCookie = true) =>
      fetch(`${system.consoleUrl}/api/testrun.console.v1.ConsoleService/${method}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "connect-protocol-version": "1",
          ...(withCookie && { cookie }),
        },
        body,
      });
    const oversized = JSON.stringify({
      projectId,
      testCaseId: testCase?.id,
      name: "x".repeat(8 * 1024 * 1024),
    });
    for (const method of ["CreateTestCase", "UpdateTestCase"]) {
      const answer = await post(method, oversized);
      expect([method, ((await answer.json()) as { code: string }).code]).to.deep.equal([
        method,
        "resource_exhausted",
      ]);
      // Without a session nothing is read: the session is asked for before the size is looked at.
      const anonymous = await post(method, oversized, false);
      expect([method, anonymous.status, ((await anonymous.json()) as { code: string }).code]).to.deep.equal([
        method,
        401,
        "unauthenticated",
      ]);
    }
    const listed = await client.listTestCases({ projectId, search: "Two uploads" });
    expect(listed.testCases.map((c) => c.name)).to.deep.equal(["Two uploads"]);
  });
});
