// Authoring in the console, in a real browser against the whole system: an Owner creates, renames
// and deletes a project (typed confirmation); an Editor manages environments (a bad base URL's
// error at its field) and variables (write-only values, where a variable is used before deleting
// it); a Viewer sees no edit controls and the console's API refuses that Viewer's direct calls.
// At 1280 and 390 px; every page and dialog saved under .tmp/screenshots.
import { Code } from "@connectrpc/connect";
import { createCliContext, createKey } from "@testrun/cli";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { expect } from "chai";
import type { System } from "../scripts/system.js";
import { errorAt, expectNoErrorAt, shot, viewports } from "./browser.js";
import { consoleBrowserSuite } from "./console-browser-suite.js";
import { consoleClient, refusal, signIn } from "./console-client.js";
import { addCases, type TestProject } from "./pipeline.js";

describe("console authoring in a browser", function () {
  this.timeout(90_000);
  const suite = consoleBrowserSuite("Acme authoring", { credits: 0 });
  const { signedIn, member, secrets } = suite;
  let system: System;
  let acme: TestProject;
  let organizationId: string;
  before(() => {
    ({ system, project: acme, organizationId } = suite);
  });
  const px = (width: keyof typeof viewports) => viewports[width].width;
  const v1Project = (secret: string) =>
    fetch(`${system.gatewayUrl}/v1/project`, { headers: { authorization: `Bearer ${secret}` } });

  for (const width of ["wide", "narrow"] as const) {
    it(`an Owner creates, renames and deletes a project, typing its name; its keys stop working (${px(width)} px)`, async () => {
      const page = await signedIn(width, acme.ownerId);
      await page.goto(`${system.consoleUrl}/orgs/${organizationId}`);
      await page.getByRole("button", { name: "New project" }).click();
      const dialog = page.getByRole("dialog", { name: "New project" });
      // Nothing typed: the catalog's "is required" at the Name field, nothing created.
      await dialog.getByRole("button", { name: "Create project" }).click();
      const name = dialog.getByLabel("Name", { exact: true });
      await dialog.locator(".field-error").waitFor();
      expect(await errorAt(name)).to.equal("Is required.");
      await shot(page, "project-create-error", width);
      const projectName = `Checkout ${width}`;
      // The error is about the value refused: gone once the name is typed, back if it is emptied.
      await name.fill(projectName);
      await expectNoErrorAt(name);
      expect(await dialog.locator(".field-error").count()).to.equal(0);
      await name.fill("");
      expect(await errorAt(name)).to.equal("Is required.");
      await name.fill(projectName);
      await expectNoErrorAt(name);
      await dialog.getByLabel(/Description/).fill("The shop's checkout, end to end.");
      await dialog.getByRole("button", { name: "Create project" }).click();
      await page.getByRole("heading", { name: projectName, level: 1 }).waitFor();
      const projectId = new URL(page.url()).pathname.split("/")[2] ?? "";
      expect(projectId).to.match(/^prj_/);
      await shot(page, "project-overview-admin", width);

      // No environment yet: Start run says where to add one, and its link goes there.
      await page.getByRole("button", { name: "Start run" }).click();
      const start = page.getByRole("dialog", { name: "Start run" });
      await start.getByText(/This project has no environment yet/).waitFor();
      await shot(page, "start-run-no-environment", width);
      await start.getByRole("link", { name: "Environments page" }).click();
      await page.getByRole("button", { name: "New environment" }).waitFor();
      expect(new URL(page.url()).pathname).to.equal(`/projects/${projectId}/environments`);
      await page.goBack();
      await page.getByRole("heading", { name: projectName, level: 1 }).waitFor();

      // A second project of the same name (ignoring case) is refused at the Name field.
      await page.getByRole("button", { name: "Rename project" }).click();
      const rename = page.getByRole("dialog", { name: "Rename project" });
      await rename.getByLabel("Name", { exact: true }).fill("ACME AUTHORING");
      await rename.getByRole("button", { name: "Save" }).click();
      await rename.locator(".field-error").waitFor();
      expect(await errorAt(rename.getByLabel("Name", { exact: true }))).to.match(
        /already has a project named/,
      );
      await shot(page, "project-rename-error", width);
      const renamed = `${projectName} renamed`;
      await rename.getByLabel("Name", { exact: true }).fill(renamed);
      await expectNoErrorAt(rename.getByLabel("Name", { exact: true }));
      expect(await rename.locator(".field-error").count()).to.equal(0);
      await rename.getByRole("button", { name: "Save" }).click();
      await page.getByRole("heading", { name: renamed, level: 1 }).waitFor();

      const { secret } = await createKey(createCliContext(system.env), {
        projectId,
        name: "deploy",
        creatorMemberId: acme.ownerId,
      });
      secrets.push(secret);
      expect((await v1Project(secret)).status).to.equal(200);

      await page.getByRole("button", { name: "Delete project" }).click();
      const confirm = page.getByRole("dialog", { name: `Delete ${renamed}?` });
      await confirm.getByText("Its 1 active API key stops working at once").waitFor();
      await confirm.getByText(/0 environments, 0 test plans, 0 test cases and 0 variables/).waitFor();
      const deleteButton = confirm.getByRole("button", { name: "Delete project" });
      expect(await deleteButton.isDisabled()).to.equal(true);
      await confirm.getByLabel(/Type the project's name/).fill(projectName);
      expect(await deleteButton.isDisabled(), "a name that is not the project's").to.equal(true);
      await confirm.getByLabel(/Type the project's name/).fill(renamed);
      await shot(page, "project-delete-confirm", width);
      await deleteButton.click();
      await page.getByText(`Project ${renamed} deleted.`).waitFor();
      expect(new URL(page.url()).pathname).to.equal(`/orgs/${organizationId}`);
      expect(await page.getByRole("link", { name: renamed }).count()).to.equal(0);
      await shot(page, "project-deleted", width);

      expect((await v1Project(secret)).status).to.equal(401);
      const cookie = (await page.context().cookies()).find((c) => c.name === "testrun_session");
      const client = consoleClient(system, `testrun_session=${cookie?.value}`);
      expect((await refusal(client.listRuns({ projectId }))).code).to.equal(Code.NotFound);
      expect((await refusal(client.getCredits({ projectId }))).code).to.equal(Code.NotFound);
    });

    it(`an Editor creates an environment (a bad base URL's error at its field), makes it default, edits and deletes one (${px(width)} px)`, async () => {
      const editor = await member(`env-editor-${width}@acme.example`, Role.EDITOR);
      const page = await signedIn(width, editor.id);
      await page.goto(`${system.consoleUrl}/projects/${acme.projectId}/environments`);
      await page.getByRole("row", { name: /demo/ }).waitFor();
      await shot(page, "environments-editor", width);

      await page.getByRole("button", { name: "New environment" }).click();
      const dialog = page.getByRole("dialog", { name: "New environment" });
      const envName = `staging-${width}`;
      await dialog.getByLabel("Name", { exact: true }).fill(envName);
      const baseUrl = dialog.getByLabel("Base URL");
      const credential = `s3cret-${width}`;
      secrets.push(credential);
      await baseUrl.fill(`https://ci:${credential}@staging.example.com`);
      await dialog.getByRole("button", { name: "Create environment" }).click();
      await dialog.locator(".field-error").waitFor();
      expect(await errorAt(baseUrl)).to.equal(
        "Must not carry a user name or password (user:pass@host): keep credentials in variables and send them in a step's headers.",
      );
      // The keyboard lands on the field to fix; the name, which was fine, has no error.
      expect(await baseUrl.evaluate((el) => el === el.ownerDocument.activeElement)).to.equal(true);
      expect(await dialog.getByLabel("Name", { exact: true }).getAttribute("aria-invalid")).to.equal(null);
      await shot(page, "environment-base-url-error", width);
      await baseUrl.fill("https://staging.example.com/api/");
      await expectNoErrorAt(baseUrl);
      expect(await dialog.locator(".field-error").count()).to.equal(0);
      await dialog.getByRole("button", { name: "Create environment" }).click();
      const row = page.getByRole("row", { name: new RegExp(envName) });
      await row.waitFor();
      // Stored as the catalog keeps it: without the trailing slash.
      await row.getByText("https://staging.example.com/api", { exact: true }).waitFor();

      await row.getByRole("button", { name: `Make ${envName} the default` }).click();
      await page.getByText(`${envName} is now the default environment.`).waitFor();
      await row.getByText("Default", { exact: true }).waitFor();
      expect(
        await page.getByRole("row", { name: /demo/ }).getByText("Default", { exact: true }).count(),
      ).to.equal(0);
      await shot(page, "environments-new-default", width);

      await row.getByRole("button", { name: `Edit ${envName}` }).click();
      const edit = page.getByRole("dialog", { name: `Edit ${envName}` });
      await edit.getByLabel("Base URL").fill("ftp://staging.example.com");
      await edit.getByRole("button", { name: "Save" }).click();
      await edit.locator(".field-error").waitFor();
      expect(await errorAt(edit.getByLabel("Base URL"))).to.equal(
        "Must be an absolute http:// or https:// URL.",
      );
      await shot(page, "environment-edit-error", width);
      await edit.getByLabel("Base URL").fill("https://staging-2.example.com");
      await expectNoErrorAt(edit.getByLabel("Base URL"));
      expect(await edit.locator(".field-error").count()).to.equal(0);
      await shot(page, "environment-edit-error-fixed", width);
      await edit.getByRole("button", { name: "Save" }).click();
      await row.getByText("https://staging-2.example.com", { exact: true }).waitFor();

      await row.getByRole("button", { name: `Delete ${envName}` }).click();
      const confirm = page.getByRole("dialog", { name: `Delete ${envName}?` });
      await confirm.getByText(/It is the default/).waitFor();
      await shot(page, "environment-delete-confirm", width);
      await confirm.getByRole("button", { name: "Delete environment" }).click();
      await row.waitFor({ state: "detached" });
      await page.getByText(`${envName} deleted.`).waitFor();
      // The demo environment is made the default again for the other tests.
      await page.getByRole("button", { name: "Make demo the default" }).click();
      await page.getByText("demo is now the default environment.").waitFor();
    });

    it(`an Editor creates a variable, sets its value (never shown back), and sees where it is used before deleting it (${px(width)} px)`, async () => {
      const editor = await member(`var-editor-${width}@acme.example`, Role.EDITOR);
      const variable = `TOKEN_${width.toUpperCase()}`;
      await addCases(
        system,
        acme.projectId,
        `- name: Login ${width}\n  steps:\n    - name: sign in\n      http: { method: GET, path: "/", headers: { authorization: "Bearer {{${variable}}}" } }\n      expect: { status: 200 }\n` +
          `- name: Profile ${width}\n  steps:\n    - name: me\n      http: { method: GET, path: "/me/{{${variable}}}" }\n      expect: { status: 200 }\n` +
          `- name: Health ${width}\n  steps:\n    - name: up\n      http: { method: GET, path: "/{{${variable}_OTHER}}" }\n      expect: { status: 200 }\n`,
      );
      const page = await signedIn(width, editor.id);
      await page.goto(`${system.consoleUrl}/projects/${acme.projectId}/variables`);
      await page.getByRole("heading", { name: "Variables", level: 1 }).waitFor();

      await page.getByRole("button", { name: "New variable" }).click();
      const dialog = page.getByRole("dialog", { name: "New variable" });
      const name = dialog.getByLabel("Name", { exact: true });
      // The rule is shown, and a name breaking it is said so as it is typed.
      await dialog.getByText(/A letter or underscore, then letters, digits and underscores/).waitFor();
      await name.fill("1-token");
      expect(await errorAt(name)).to.equal("Must not start with a digit.");
      await name.fill("my-token");
      expect(await errorAt(name)).to.equal("“-” is not allowed: only letters, digits and underscores.");
      await shot(page, "variable-create-bad-name", width);
      await name.fill(variable);
      await dialog.getByText(`{{${variable}}}`).waitFor();
      const value = `first-value-${width}-${Date.now()}`;
      secrets.push(value);
      await dialog.getByLabel("Value").fill(value);
      await shot(page, "variable-create", width);
      await dialog.getByRole("button", { name: "Create variable" }).click();
      const row = page.getByRole("row", { name: new RegExp(variable) });
      await row.waitFor();
      await page.getByText(`${variable} created.`).waitFor();
      expect(await page.content()).not.to.contain(value);

      // The same name again (another letter case) is refused at the Name field.
      await page.getByRole("button", { name: "New variable" }).click();
      await dialog.getByLabel("Name", { exact: true }).fill(variable.toLowerCase());
      await dialog.getByLabel("Value").fill("x");
      await dialog.getByRole("button", { name: "Create variable" }).click();
      await dialog.locator(".field-error").waitFor();
      expect(await errorAt(dialog.getByLabel("Name", { exact: true }))).to.match(
        /already has a variable named/,
      );
      await dialog.getByLabel("Name", { exact: true }).fill(`${variable}_2`);
      await expectNoErrorAt(dialog.getByLabel("Name", { exact: true }));
      expect(await dialog.locator(".field-error").count()).to.equal(0);
      await dialog.getByRole("button", { name: "Cancel" }).click();

      await row.getByRole("button", { name: `Set new value of ${variable}` }).click();
      const set = page.getByRole("dialog", { name: `New value of ${variable}` });
      const newValue = `second-value-${width}-${Date.now()}`;
      secrets.push(newValue);
      await set.getByLabel("New value").fill(newValue);
      await set.getByRole("button", { name: "Save value" }).click();
      await page.getByText(`New value of ${variable} saved.`).waitFor();
      expect(await page.content()).not.to.contain(newValue);
      // Opening the dialog again shows an empty field: the value is not read back.
      await row.getByRole("button", { name: `Set new value of ${variable}` }).click();
      expect(await set.getByLabel("New value").inputValue()).to.equal("");
      await set.getByRole("button", { name: "Cancel" }).click();

      await row.getByRole("button", { name: `Delete ${variable}` }).click();
      const confirm = page.getByRole("dialog", { name: `Delete ${variable}?` });
      const uses = confirm.getByRole("list", { name: `Test cases using ${variable}` });
      await uses.waitFor();
      expect(await uses.getByRole("listitem").allTextContents()).to.deep.equal([
        `Login ${width}`,
        `Profile ${width}`,
      ]);
      await confirm.getByText(/2 test cases name/).waitFor();
      await shot(page, "variable-delete-uses", width);
      await confirm.getByRole("button", { name: "Delete variable" }).click();
      await row.waitFor({ state: "detached" });
      await page.getByText(`${variable} deleted.`).waitFor();
      await shot(page, "variables-after-delete", width);
    });
  }

  it("a Viewer sees every authoring page without edit controls, and the console's API refuses the Viewer's changes", async () => {
    const viewer = await member("viewer@acme.example", Role.VIEWER);
    const editor = await member("api-editor@acme.example", Role.EDITOR);
    const editorClient = consoleClient(system, await signIn(system, editor.id));
    const { variable } = await editorClient.createVariable({
      projectId: acme.projectId,
      name: "VIEWER_CHECK",
      value: "viewer-check-value",
    });
    secrets.push("viewer-check-value");
    const environmentId = (await editorClient.listEnvironments({ projectId: acme.projectId })).environments[0]
      ?.id;

    for (const width of ["wide", "narrow"] as const) {
      const page = await signedIn(width, viewer.id);
      const pages = [
        { path: `/orgs/${organizationId}`, heading: "Acme authoring", name: "org-projects-viewer" },
        { path: `/projects/${acme.projectId}`, heading: "Acme authoring", name: "project-overview-viewer" },
        {
          path: `/projects/${acme.projectId}/environments`,
          heading: "Environments",
          name: "environments-viewer",
        },
        { path: `/projects/${acme.projectId}/variables`, heading: "Variables", name: "variables-viewer" },
      ];
      for (const { path, heading, name } of pages) {
        await page.goto(`${system.consoleUrl}${path}`);
        await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
        // The page has loaded its content (a list or its empty state) before buttons are counted.
        await page.locator(".cards, .table, .state-empty, .overview").first().waitFor();
        await shot(page, name, width);
        const buttons = (await page.getByRole("button").allTextContents()).map((text) => text.trim());
        const editing = buttons.filter((text) =>
          /^(New |Create|Rename|Delete|Edit|Make default|Set new value|Start run)/.test(text),
        );
        expect(editing, `${path} at ${px(width)} px`).to.deep.equal([]);
      }
    }

    // The Viewer's own session, calling the console's API directly: the catalog refuses each change.
    const viewerClient = consoleClient(system, await signIn(system, viewer.id));
    const projectId = acme.projectId;
    const calls: [string, () => Promise<unknown>][] = [
      ["CreateProject", () => viewerClient.createProject({ organizationId, name: "Sneaky" })],
      ["UpdateProject", () => viewerClient.updateProject({ projectId, name: "Renamed by a viewer" })],
      ["DeleteProject", () => viewerClient.deleteProject({ projectId })],
      [
        "CreateEnvironment",
        () => viewerClient.createEnvironment({ projectId, name: "x", baseUrl: "https://x.io" }),
      ],
      [
        "UpdateEnvironment",
        () => viewerClient.updateEnvironment({ projectId, environmentId, baseUrl: "https://x.io" }),
      ],
      ["DeleteEnvironment", () => viewerClient.deleteEnvironment({ projectId, environmentId })],
      ["CreateVariable", () => viewerClient.createVariable({ projectId, name: "SNEAKY", value: "v" })],
      [
        "SetVariableValue",
        () => viewerClient.setVariableValue({ projectId, variableId: variable?.id, value: "v" }),
      ],
      ["DeleteVariable", () => viewerClient.deleteVariable({ projectId, variableId: variable?.id })],
    ];
    for (const [name, call] of calls)
      expect((await refusal(call())).code, name).to.equal(Code.PermissionDenied);
    // An Editor may change content but not create or delete projects (ADMIN or above).
    expect(
      (await refusal(editorClient.createProject({ organizationId, name: "By an editor" }))).code,
    ).to.equal(Code.PermissionDenied);
    expect((await refusal(editorClient.deleteProject({ projectId }))).code).to.equal(Code.PermissionDenied);
    // Nothing changed.
    const owner = consoleClient(system, await signIn(system, acme.ownerId));
    expect((await owner.getProject({ projectId })).project?.name).to.equal("Acme authoring");
    expect((await owner.listProjects({ organizationId })).projects.map((p) => p.name)).to.deep.equal([
      "Acme authoring",
    ]);
    const environments = (await owner.listEnvironments({ projectId })).environments;
    expect(environments.map((e) => [e.name, e.baseUrl])).to.deep.equal([["demo", system.demoTargetUrl]]);
    expect((await owner.listVariables({ projectId })).variables.map((v) => v.name)).to.deep.equal([
      "VIEWER_CHECK",
    ]);
    // Reading where a variable is used is open to every member.
    const uses = await viewerClient.listVariableUses({ projectId, variableId: variable?.id });
    expect(uses.testCases).to.deep.equal([]);
  });

  // Last (mocha runs a suite's own tests in order): by now every secret was seen.
  it("no key, link token, variable value or base URL credential in any log line", () => {
    expect(secrets.length).to.be.greaterThan(6);
    for (const [name, child] of system.processes) {
      const output = child.output().join("\n");
      for (const secret of secrets)
        expect(output.includes(secret), `${name} logged a secret`).to.equal(false);
    }
  });
});
