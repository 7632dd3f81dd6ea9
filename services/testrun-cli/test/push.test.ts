// `testrun push` against the real gateway, keys and catalog (processes): a folder of Playwright
// specs becomes one test case per spec, with the helpers each imports; pushed again nothing
// changes; a changed spec is updated. The content token is read from TESTRUN_CONTENT_TOKEN only and
// never printed; an API key in its place, or a missing token, is refused with what to do.
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { create, type DescService } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { CatalogService, Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { type Actor, ActorSchema } from "@testrun/gen/testrun/common/v1/actor_pb";
import { KeyKind, KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { serviceClient } from "@testrun/kit";
import {
  componentRedisUrl,
  createMigratedTestDatabase,
  findFreePort,
  type GatewayProcess,
  type ServiceProcess,
  startGateway,
  startServiceProcess,
  testTokens,
} from "@testrun/testing";
import { expect } from "chai";
import { main } from "../src/cli.js";

describe("testrun push (catalog, keys and gateway as processes)", function () {
  this.timeout(120_000);
  const tokens = testTokens();
  const operator: Actor = create(ActorSchema, { kind: { case: "operator", value: { name: "push test" } } });
  let catalogProcess: ServiceProcess;
  let keysProcess: ServiceProcess;
  let gateway: GatewayProcess;
  let catalog: Client<typeof CatalogService>;
  let keys: Client<typeof KeysService>;
  let projectId = "";
  let editorId = "";
  let contentToken = "";
  let apiKey = "";
  let folder = "";

  const client = <S extends DescService>(service: S, url: string) =>
    serviceClient(service, url, { token: tokens.SERVICE_TOKEN, timeoutMs: 30_000 });

  /** Writes `files` (path → text) under the test's folder. */
  const write = (files: Record<string, string>) => {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(folder, path)), { recursive: true });
      writeFileSync(join(folder, path), text);
    }
  };

  /** Runs `testrun` as the bin does, with the environment given, and keeps what it wrote. */
  async function testrun(argv: string[], env: Record<string, string>) {
    const out: string[] = [];
    const err: string[] = [];
    const { code } = await main(argv, {
      env: { TESTRUN_URL: gateway.http, ...env },
      stdout: { write: (text: string) => void out.push(text), isTTY: false },
      stderr: { write: (text: string) => void err.push(text) },
    });
    const [stdout, stderr] = [out.join(""), err.join("")];
    // Never the token, nor any part of it past its visible prefix.
    for (const secret of [contentToken, apiKey]) {
      expect(stdout).not.to.contain(secret.slice(4, 16));
      expect(stderr).not.to.contain(secret.slice(4, 16));
    }
    return { code, stdout, stderr };
  }
  const push = (...args: string[]) =>
    testrun(["push", folder, ...args], { TESTRUN_CONTENT_TOKEN: contentToken });

  const specCases = async () => {
    const { testCases } = await catalog.listTestCases({ actor: operator, projectId, includeSteps: true });
    return testCases.map((c) => ({
      name: c.name,
      spec: c.playwright?.spec?.path,
      files: c.playwright?.files.map((f) => f.path) ?? [],
    }));
  };

  before(async () => {
    const databaseUrl = await createMigratedTestDatabase(["catalog", "keys"]);
    const [keysPort, catalogPort] = [await findFreePort(), await findFreePort()];
    const keysUrl = `http://127.0.0.1:${keysPort}`;
    const catalogUrl = `http://127.0.0.1:${catalogPort}`;
    const adminRedisUrl = String(process.env.REDIS_URL);
    [catalogProcess, keysProcess] = await Promise.all([
      startServiceProcess("catalog", {
        ...tokens,
        DATABASE_URL: databaseUrl,
        PORT: String(catalogPort),
        KEYS_URL: keysUrl,
        REDIS_URL: componentRedisUrl(adminRedisUrl, "catalog"),
        VARIABLES_KEY: randomBytes(32).toString("base64"),
      }),
      startServiceProcess("keys", {
        ...tokens,
        DATABASE_URL: databaseUrl,
        PORT: String(keysPort),
        CATALOG_URL: catalogUrl,
        REDIS_URL: componentRedisUrl(adminRedisUrl, "keys"),
      }),
    ]);
    gateway = await startGateway({
      ...tokens,
      REDIS_URL: componentRedisUrl(adminRedisUrl, "gateway"),
      KEYS_URL: keysUrl,
      CATALOG_URL: catalogUrl,
    });
    catalog = client(CatalogService, catalogUrl);
    keys = client(KeysService, keysUrl);
    const { organization } = await catalog.createOrganization({
      actor: operator,
      name: "Shop",
      ownerEmail: "owner@shop.example",
      ownerDisplayName: "Olga",
    });
    const { member } = await catalog.addMember({
      actor: operator,
      organizationId: organization?.id ?? "",
      email: "ed@shop.example",
      displayName: "Ed",
      role: Role.EDITOR,
    });
    editorId = member?.id ?? "";
    const { project } = await catalog.createProject({
      actor: operator,
      organizationId: organization?.id ?? "",
      name: "Shop",
    });
    projectId = project?.id ?? "";
    const secretOf = async (kind: KeyKind) =>
      (await keys.createKey({ actor: operator, projectId, name: "ci", creatorMemberId: editorId, kind }))
        .secret;
    contentToken = await secretOf(KeyKind.CONTENT_TOKEN);
    apiKey = await secretOf(KeyKind.API_KEY);
    folder = mkdtempSync(join(tmpdir(), "testrun-push-"));
  });

  after(async () => {
    if (folder) rmSync(folder, { recursive: true, force: true });
    await Promise.all([gateway, catalogProcess, keysProcess].map((p) => p?.stop("SIGKILL")));
  });

  it("makes each spec one test case with the helpers it imports; again, nothing changes; a changed spec is updated", async () => {
    write({
      "tests/login.spec.ts": `import { test, expect } from "@playwright/test";\nimport { LoginPage } from "../pages/login";\ntest("logs in", async ({ page }) => { await new LoginPage(page).open(); });\n`,
      "tests/cart.test.js": `const { test } = require("@playwright/test");\ntest("adds to cart", async ({ page }) => { await page.goto("/cart"); });\n`,
      "pages/login.ts": `import data from "./users.json";\nexport class LoginPage { constructor(readonly page: any) {} async open() { await this.page.goto("/login?u=" + data.name); } }\n`,
      "pages/users.json": `{ "name": "ana" }\n`,
      "pages/unused.ts": "export const unused = 1;\n",
      "playwright.config.ts": "export default {};\n",
      "node_modules/pkg/vendor.spec.ts": "not ours\n",
      ".cache/old.spec.ts": "hidden\n",
    });

    const preview = await push("--dry-run");
    expect(preview.code, preview.stderr).to.equal(0);
    expect(preview.stdout).to.contain(`Pushing 2 spec files (with 2 helper files) from ${folder} (dry run)`);
    expect(preview.stdout).to.contain(
      "Dry run, nothing written: 2 created, 0 updated, 0 unchanged if pushed.",
    );
    expect(await specCases()).to.deep.equal([]);

    const first = await push();
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stdout).to.match(/ {2}created {3}tests\/cart\.test\.js {2}tc_/);
    expect(first.stdout).to.match(/ {2}created {3}tests\/login\.spec\.ts {2}tc_/);
    expect(first.stdout).to.contain("Pushed 2 specs: 2 created, 0 updated, 0 unchanged.");
    expect(await specCases()).to.have.deep.members([
      { name: "tests/cart.test.js", spec: "tests/cart.test.js", files: [] },
      {
        name: "tests/login.spec.ts",
        spec: "tests/login.spec.ts",
        files: ["pages/login.ts", "pages/users.json"],
      },
    ]);

    const again = await push();
    expect(again.stdout).to.contain("Pushed 2 specs: 0 created, 0 updated, 2 unchanged.");

    write({
      "tests/cart.test.js": `const { test } = require("@playwright/test");\ntest("empties the cart", async () => {});\n`,
    });
    const changed = await push("--json", "-");
    expect(changed.code).to.equal(0);
    expect(changed.stderr).to.match(/ {2}updated {3}tests\/cart\.test\.js \(playwright\)/);
    expect(changed.stderr).to.contain("Pushed 2 specs: 0 created, 1 updated, 1 unchanged.");
    const json = JSON.parse(changed.stdout) as { applied: boolean; testCases: { outcome: string }[] };
    expect(json.applied).to.equal(true);
    expect(json.testCases.map((c) => c.outcome)).to.deep.equal(["changed", "unchanged"]);

    // --tags: every pushed case carries them, so `testrun run --tags` picks the pushed specs.
    const tagged = await push("--tags", "e2e, web");
    expect(tagged.stdout).to.contain("Pushed 2 specs: 0 created, 2 updated, 0 unchanged.");
    expect(tagged.stdout).to.match(/ {2}updated {3}tests\/cart\.test\.js \(tags\)/);
    const { testCases } = await catalog.listTestCases({ actor: operator, projectId, tags: ["web"] });
    expect(testCases.map((c) => [c.name, c.tags])).to.have.deep.members([
      ["tests/cart.test.js", ["e2e", "web"]],
      ["tests/login.spec.ts", ["e2e", "web"]],
    ]);
  });

  it("takes the token from TESTRUN_CONTENT_TOKEN only: missing, or an API key in its place, is refused saying what to do", async () => {
    const missing = await testrun(["push", folder], { TESTRUN_API_KEY: apiKey });
    expect(missing.code).to.equal(5);
    expect(missing.stderr).to.equal("testrun: set TESTRUN_CONTENT_TOKEN (see testrun --help)\n");

    const wrong = await testrun(["push", folder], { TESTRUN_CONTENT_TOKEN: apiKey });
    expect(wrong.code).to.equal(4);
    expect(wrong.stderr).to.contain("an API key (trk_…) cannot import content: use a content token (trc_…)");
    expect(wrong.stderr).to.contain("(HTTP 401 unauthorized): check TESTRUN_CONTENT_TOKEN");

    // And the token does not run anything.
    const run = await testrun(["run", "--plan", "Smoke"], { TESTRUN_API_KEY: contentToken });
    expect(run.code).to.equal(4);
    expect(run.stderr).to.contain("a content token (trc_…) only imports content");
  });

  it("refuses a folder without specs, or a spec past its bounds, before sending anything", async () => {
    const empty = mkdtempSync(join(tmpdir(), "testrun-push-empty-"));
    try {
      const none = await testrun(["push", empty], { TESTRUN_CONTENT_TOKEN: contentToken });
      expect(none.code).to.equal(5);
      expect(none.stderr).to.contain(
        `push: no spec file (*.spec.ts, *.spec.js, *.test.ts, *.test.js) under ${empty}`,
      );
      writeFileSync(join(empty, "huge.spec.ts"), `// ${"x".repeat(300 * 1024)}\n`);
      const huge = await testrun(["push", empty], { TESTRUN_CONTENT_TOKEN: contentToken });
      expect(huge.code).to.equal(5);
      expect(huge.stderr).to.match(/huge\.spec\.ts\.spec\.source: must be at most 256 KiB/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    const absent = await testrun(["push", join(folder, "nowhere")], { TESTRUN_CONTENT_TOKEN: contentToken });
    expect(absent.code).to.equal(5);
    expect(absent.stderr).to.contain("push: cannot read the folder");
    expect((await specCases()).map((c) => c.name)).not.to.include("huge.spec.ts");
  });
});
