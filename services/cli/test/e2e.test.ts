// testrunctl end to end: a child process, against the catalog, keys and billing services running
// as real processes on a real PostgreSQL and Redis. It runs as the image runs it, the built
// `launch.js testrunctl` (when the tests built dist/, services/testing/src/process.ts); the repository's
// bin/testrunctl, from source through tsx, where a test says so: a start costs twice the CPU.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import { StepSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import {
  builtServicesFlag,
  componentRedisUrl,
  createMigratedTestDatabase,
  findFreePort,
  repoRoot,
  type ServiceProcess,
  startServiceProcess,
  testTokens,
} from "@testrun/testing";
import { expect } from "chai";

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe("testrunctl against the real services", function () {
  this.timeout(60_000);

  const tokens = testTokens();
  const services: ServiceProcess[] = [];
  /** Every output of every CLI run in this suite, to prove no secret ever appears in one. */
  const outputs: string[] = [];
  let cliEnv: Record<string, string>;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "testrunctl-e2e-"));
    // Each service must know the others' addresses before any of them starts.
    const [keysPort, catalogPort, billingPort] = await Promise.all([
      findFreePort(),
      findFreePort(),
      findFreePort(),
    ]);
    const urls = {
      KEYS_URL: `http://127.0.0.1:${keysPort}`,
      CATALOG_URL: `http://127.0.0.1:${catalogPort}`,
      BILLING_URL: `http://127.0.0.1:${billingPort}`,
    };
    const env = {
      ...tokens,
      ...urls,
      DATABASE_URL: await createMigratedTestDatabase(["catalog", "keys", "billing"]),
      // The keys service's own Redis user (test/global-setup.ts made it).
      REDIS_URL: componentRedisUrl(String(process.env.REDIS_URL), "keys"),
      VARIABLES_KEY: randomBytes(32).toString("base64"),
    };
    services.push(
      ...(await Promise.all([
        startServiceProcess("catalog", {
          ...env,
          PORT: String(catalogPort),
          REDIS_URL: componentRedisUrl(String(process.env.REDIS_URL), "catalog"),
        }),
        startServiceProcess("keys", { ...env, PORT: String(keysPort) }),
        startServiceProcess("billing", { ...env, PORT: String(billingPort) }),
      ])),
    );
    cliEnv = { SERVICE_TOKEN: tokens.SERVICE_TOKEN, ...urls };
  });

  after(async () => {
    await Promise.all(services.map((service) => service.stop("SIGTERM")));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Runs testrunctl as an operator would, from another directory; `bin`: services/cli/bin/testrunctl. */
  async function cli(
    args: string[],
    options: { stdin?: string; env?: Record<string, string>; bin?: boolean } = {},
  ) {
    const [command, argv] =
      options.bin || process.env[builtServicesFlag] !== "1"
        ? [`${repoRoot}services/cli/bin/testrunctl`, args]
        : [process.execPath, [`${repoRoot}services/kit/dist/launch.js`, "testrunctl", ...args]];
    const child = spawn(command, argv, {
      cwd: dir,
      env: { PATH: process.env.PATH, ...(options.env ?? cliEnv) },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.stdin.end(options.stdin ?? "");
    const [code] = (await once(child, "exit")) as [number | null];
    outputs.push(stdout, stderr);
    return { code, stdout, stderr } satisfies CliRun;
  }

  /** Runs a command with --json that must succeed, and parses its output. */
  async function json<T = Record<string, unknown>>(args: string[], stdin?: string): Promise<T> {
    const run = await cli([...args, "--json"], { stdin });
    expect(run.code, `testrunctl ${args.join(" ")}: ${run.stderr}`).to.equal(0);
    return JSON.parse(run.stdout) as T;
  }

  type Obj = Record<string, unknown> & { id: string; name: string };

  /** A fresh organization with an owner, and a project in it. */
  async function orgAndProject() {
    const suffix = randomBytes(4).toString("hex");
    const created = await json<{ organization: Obj; owner: Obj }>([
      "org",
      "create",
      `Acme ${suffix}`,
      "--owner-email",
      `owner-${suffix}@acme.test`,
      "--owner-name",
      "Olga Owner",
    ]);
    const { project } = await json<{ project: Obj }>([
      "project",
      "create",
      "shop",
      "--org",
      created.organization.id,
      "--description",
      "the web shop",
    ]);
    return { org: created.organization, owner: created.owner, project };
  }

  it("creates an organization with its owner and a project, and reads both back", async () => {
    const { org, owner, project } = await orgAndProject();
    expect(org.id).to.match(/^org_/);
    expect(owner).to.include({ organizationId: org.id, role: "ROLE_OWNER", state: "MEMBER_STATE_ACTIVE" });
    expect(project).to.include({ organizationId: org.id, name: "shop", description: "the web shop" });

    // The repository's bin/testrunctl, from another directory, reads what the built one wrote.
    const listed = await cli(["org", "list", "--json"], { bin: true });
    expect(listed.code, listed.stderr).to.equal(0);
    const { organizations } = JSON.parse(listed.stdout) as { organizations: Obj[] };
    expect(organizations.map((o) => o.id)).to.include(org.id);
    const { projects } = await json<{ projects: Obj[] }>(["project", "list", "--org", org.id]);
    expect(projects).to.deep.equal([project]);

    // People get aligned columns, headed, one row per item.
    const human = await cli(["project", "list", "--org", org.id]);
    expect(human.code).to.equal(0);
    const [header, row, ...rest] = human.stdout.trimEnd().split("\n");
    expect(rest).to.deep.equal([]);
    expect(header).to.match(/^ID\s+NAME\s+ORGANIZATION\s+CREATED$/);
    expect(row?.indexOf(project.name)).to.equal(header?.indexOf("NAME"));
    expect(row?.indexOf(org.id)).to.equal(header?.indexOf("ORGANIZATION"));
  });

  it("adds a member, changes its role, removes it, and lists members with and without removed ones", async () => {
    const { org, owner } = await orgAndProject();
    const { member } = await json<{ member: Obj }>([
      "member",
      "add",
      "--org",
      org.id,
      "--email",
      "bo@acme.test",
      "--name",
      "Bo Dev",
      "--role",
      "editor",
    ]);
    expect(member).to.include({ email: "bo@acme.test", displayName: "Bo Dev", role: "ROLE_EDITOR" });

    const listed = await json<{ members: Obj[] }>(["member", "list", "--org", org.id]);
    expect(listed.members.map((m) => m.id)).to.deep.equal([owner.id, member.id]);

    const viewer = await json<{ member: Obj }>(["member", "set-role", member.id, "viewer"]);
    expect(viewer.member.role).to.equal("ROLE_VIEWER");
    expect(viewer.member.rightsLostAt).to.be.a("string");

    const removed = await json<{ member: Obj }>(["member", "remove", member.id]);
    expect(removed.member.state).to.equal("MEMBER_STATE_REMOVED");
    const active = await json<{ members: Obj[] }>(["member", "list", "--org", org.id]);
    expect(active.members.map((m) => m.id)).to.deep.equal([owner.id]);
    const all = await json<{ members: Obj[] }>(["member", "list", "--org", org.id, "--include-removed"]);
    expect(all.members.map((m) => [m.id, m.state])).to.deep.equal([
      [owner.id, "MEMBER_STATE_ACTIVE"],
      [member.id, "MEMBER_STATE_REMOVED"],
    ]);

    // The catalog's rule reaches the operator as one line and exit code 1.
    const lastOwner = await cli(["member", "remove", owner.id]);
    expect(lastOwner.code).to.equal(1);
    expect(lastOwner.stderr).to.match(/^error: failed precondition: .+ \(catalog RemoveMember\)\n$/);
  });

  it("creates environments, moving the default, and lists them oldest first", async () => {
    const { project } = await orgAndProject();
    const staging = await json<{ environment: Obj }>([
      "env",
      "create",
      "staging",
      "-p",
      project.id,
      "--base-url",
      "https://staging.shop.test",
      "--default",
    ]);
    expect(staging.environment).to.include({ baseUrl: "https://staging.shop.test", isDefault: true });
    const production = await json<{ environment: Obj }>([
      "env",
      "create",
      "production",
      "-p",
      project.id,
      "--base-url",
      "https://shop.test",
    ]);
    expect(production.environment.isDefault).to.equal(false);
    await json([
      "env",
      "create",
      "preview",
      "-p",
      project.id,
      "--base-url",
      "https://preview.shop.test",
      "--default",
    ]);

    const { environments } = await json<{ environments: Obj[] }>(["env", "list", "-p", project.id]);
    expect(environments.map((e) => [e.name, e.isDefault])).to.deep.equal([
      ["staging", false],
      ["production", false],
      ["preview", true],
    ]);
  });

  it("refuses a base URL carrying a user name and password, naming the field and not the password", async () => {
    const { project } = await orgAndProject();
    const args = ["env", "create", "basic", "-p", project.id, "--base-url", "https://ci:pw-8d1f@shop.test"];
    const run = await cli(args);
    expect(run.code).to.equal(1);
    expect(run.stderr).to.match(/^error: invalid argument: base_url: .*credentials in variables/);
    expect(run.stderr + run.stdout).not.to.contain("pw-8d1f");
    const { environments } = await json<{ environments: Obj[] }>(["env", "list", "-p", project.id]);
    expect(environments).to.deep.equal([]);
  });

  it("creates test cases from a YAML file and a plan from their names and ids, and reads them back", async () => {
    const { project } = await orgAndProject();
    const file = join(dir, "cases.yaml");
    await writeFile(
      file,
      [
        "- name: log in works",
        "  tags: [smoke, auth]",
        "  steps:",
        "    - name: log in",
        "      http:",
        "        method: POST",
        "        path: /api/login",
        "        json: { user: '{{USER}}', password: '{{PASSWORD}}' }",
        "        timeoutMs: 10000",
        "      expect:",
        "        status: 200",
        "        headers: { content-type: application/json }",
        "        bodyContains: [welcome]",
        "        json: { $.ok: true }",
        "        maxDurationMs: 2000",
        "      save: { token: $.token }",
        "- name: catalog loads",
        "  enabled: false",
        "  steps:",
        "    - name: list products",
        "      http: { method: GET, path: /api/products, query: { page: 2 } }",
        "      expect: { status: [200, 304] }",
      ].join("\n"),
    );
    const { testCases } = await json<{ testCases: Obj[] }>(["case", "create", "-p", project.id, "-f", file]);
    expect(testCases.map((t) => [t.name, t.tags, t.enabled])).to.deep.equal([
      ["log in works", ["smoke", "auth"], true],
      ["catalog loads", [], false],
    ]);
    const [login, catalog] = testCases as [Obj, Obj];

    // The steps as the catalog stored them: the proto shape, converted from the file's.
    const listed = await json<{ testCases: Obj[]; truncated: boolean }>([
      "case",
      "list",
      "-p",
      project.id,
      "--steps",
    ]);
    expect(listed.truncated).to.equal(false);
    expect(listed.testCases.map((t) => t.id)).to.deep.equal([login.id, catalog.id]);
    expect(listed.testCases[0]?.steps).to.deep.equal([
      {
        name: "log in",
        http: {
          request: {
            method: "POST",
            path: "/api/login",
            headers: {},
            query: {},
            json: { user: "{{USER}}", password: "{{PASSWORD}}" },
            timeoutMs: 10000,
          },
          expect: {
            status: [200],
            headers: { "content-type": "application/json" },
            bodyContains: ["welcome"],
            bodyNotContains: [],
            json: { "$.ok": true },
            maxDurationMs: 2000,
          },
          save: { token: "$.token" },
        },
      },
    ]);
    expect(listed.testCases[1]?.steps).to.have.nested.property("[0].http.request.query.page", "2");
    const byTag = await json<{ testCases: Obj[] }>(["case", "list", "-p", project.id, "--tag", "SMOKE"]);
    expect(byTag.testCases.map((t) => t.id)).to.deep.equal([login.id]);

    // A plan by exact name (ignoring case) and by id, in the order given.
    const { testPlan } = await json<{ testPlan: Obj }>([
      "plan",
      "create",
      "smoke",
      "-p",
      project.id,
      "--case",
      catalog.id,
      "--case",
      "LOG IN WORKS",
    ]);
    expect(testPlan.testCaseIds).to.deep.equal([catalog.id, login.id]);
    const { testPlans } = await json<{ testPlans: Obj[] }>(["plan", "list", "-p", project.id]);
    expect(testPlans).to.deep.equal([testPlan]);

    const unknown = await cli(["plan", "create", "x", "-p", project.id, "--case", "no such case"]);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.equal('error: no test case of the project has the id or name "no such case"\n');
  });

  it("names a test case the catalog refuses by its path in the file, and what was created before it", async () => {
    const { project } = await orgAndProject();
    const file = join(dir, "refused.json");
    const step = (method: string) => ({ name: "s", http: { method, path: "/" } });
    await writeFile(
      file,
      JSON.stringify([
        { name: "fine", steps: [step("GET")] },
        { name: "odd method", steps: [step("GET"), step("FETCH")] },
      ]),
    );
    const run = await cli(["case", "create", "-p", project.id, "-f", file]);
    expect(run.code).to.equal(1);
    expect(run.stdout).to.equal("");
    const [fine] = (await json<{ testCases: Obj[] }>(["case", "list", "-p", project.id])).testCases as [Obj];
    expect(fine.name).to.equal("fine");
    expect(run.stderr).to.match(
      /^error: invalid argument: \[1\]\.steps\[1\]\.http\.method: .+ \(catalog CreateTestCase\); /,
    );
    expect(run.stderr).to.include(`test case [1] ("odd method"); created before it: ${fine.id}`);
    expect(run.stderr.trimEnd().split("\n")).to.have.length(1);
  });

  it("exports a project's content, imports it back unchanged, and imports a changed copy: preview first, then all of it", async () => {
    const { project } = await orgAndProject();
    const cases = join(dir, "content-cases.yaml");
    await writeFile(
      cases,
      [
        "- name: log in",
        "  tags: [smoke]",
        "  steps: [{ name: s, http: { method: POST, path: /login, json: { u: '{{USER}}' } }, expect: { status: 200 } }]",
        "- name: profile",
        "  enabled: false",
        "  steps: [{ name: s, http: { method: GET, path: /me } }]",
      ].join("\n"),
    );
    const [login, profile] = (
      await json<{ testCases: Obj[] }>(["case", "create", "-p", project.id, "-f", cases])
    ).testCases as [Obj, Obj];
    await json(["plan", "create", "smoke", "-p", project.id, "--case", profile.id, "--case", login.id]);

    const exported = await cli(["content", "export", "-p", project.id]);
    expect(exported.code, exported.stderr).to.equal(0);
    expect(exported.stdout).to.contain(`  - id: ${login.id}\n    name: log in\n`);
    expect(exported.stdout).to.contain("    testCases:\n      - profile\n      - log in\n");
    const asJson = await cli(["content", "export", "-p", project.id, "--format", "json"]);
    expect(JSON.parse(asJson.stdout).testPlans[0].testCases).to.deep.equal(["profile", "log in"]);
    const file = join(dir, "content.yaml");
    await writeFile(file, exported.stdout);

    // The export imported as it is: nothing to do.
    const same = await cli(["content", "import", "-p", project.id, "-f", file]);
    expect(same.code, same.stderr).to.equal(0);
    expect(same.stdout.trimEnd().split("\n")).to.deep.equal([
      "ITEM          NAME     OUTCOME    ID",
      `testCases[0]  log in   unchanged  ${login.id}`,
      `testCases[1]  profile  unchanged  ${profile.id}`,
      `testPlans[0]  smoke    unchanged  ${(await json<{ testPlans: Obj[] }>(["plan", "list", "-p", project.id])).testPlans[0]?.id}`,
    ]);
    expect(same.stderr).to.equal(
      "imported: test cases: 0 created, 0 changed, 2 unchanged; test plans: 0 created, 0 changed, 1 unchanged. 0 test cases and 0 test plans of the project are not in the document and stay as they are.\n",
    );

    // A reviewed change: a renamed test case, a new one, the plan running it.
    const changed = exported.stdout
      .replace("name: log in\n", "name: log in works\n")
      .replace("      - log in\n", "      - log in works\n      - sign up\n")
      .replace(
        "testPlans:",
        "  - name: sign up\n    steps:\n      - name: s\n        http: { method: POST, path: /signup }\ntestPlans:",
      );
    await writeFile(file, changed);
    const preview = await json<{ testCases: Obj[]; applied: boolean }>([
      "content",
      "import",
      "-p",
      project.id,
      "-f",
      file,
      "--dry-run",
    ]);
    expect(preview.applied).to.equal(false);
    expect(preview.testCases.map((i) => [i.name, i.outcome, i.changedFields])).to.deep.equal([
      ["log in works", "ITEM_OUTCOME_CHANGED", ["name"]],
      ["profile", "ITEM_OUTCOME_UNCHANGED", []],
      ["sign up", "ITEM_OUTCOME_CREATED", []],
    ]);
    expect((await json<{ testCases: Obj[] }>(["case", "list", "-p", project.id])).testCases).to.have.length(
      2,
    );
    const applied = await cli(["content", "import", "-p", project.id, "-f", file]);
    expect(applied.code, applied.stderr).to.equal(0);
    expect(applied.stdout).to.match(/testPlans\[0\] {2}smoke +changed: testCases +pln_/);
    const after = (await json<{ testCases: Obj[] }>(["case", "list", "-p", project.id])).testCases;
    expect(after.map((c) => c.name)).to.deep.equal(["log in works", "profile", "sign up"]);
    const { testPlans } = await json<{ testPlans: Obj[] }>(["plan", "list", "-p", project.id]);
    expect(testPlans[0]?.testCaseIds).to.deep.equal([profile.id, login.id, after[2]?.id]);
  });

  it("imports a project's export into a new project as it is: items by name, environments, variables without values to set", async () => {
    const source = (await orgAndProject()).project;
    const token = `token-${randomBytes(12).toString("hex")}`;
    const file = join(dir, "moving.yaml");
    await writeFile(
      file,
      "- name: a\n  steps: [{ name: s, http: { method: GET, path: '/a?t={{API_TOKEN}}' } }]\n",
    );
    await json(["case", "create", "-p", source.id, "-f", file]);
    await json(["plan", "create", "p", "-p", source.id, "--case", "a"]);
    await json([
      "env",
      "create",
      "staging",
      "-p",
      source.id,
      "--base-url",
      "https://staging.example.com",
      "--default",
    ]);
    await json(["var", "set", "API_TOKEN", "-p", source.id], token);
    const exported = await cli(["content", "export", "-p", source.id]);
    expect(exported.code, exported.stderr).to.equal(0);
    expect(exported.stdout).to.not.contain(token);
    expect(exported.stdout).to.match(
      new RegExp(
        `^project: ${source.id}\nenvironments:\n  - name: staging\n    baseUrl: https://staging.example.com\n    isDefault: true\nvariables:\n  - API_TOKEN\ntestCases:\n`,
      ),
    );
    await writeFile(file, exported.stdout);

    const { project } = await orgAndProject();
    const run = await cli(["content", "import", "-p", project.id, "-f", file]);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout.split("\n").map((line) => line.split(/ {2,}/).slice(0, 3))).to.deep.equal([
      ["ITEM", "NAME", "OUTCOME"],
      ["environments[0]", "staging", "new"],
      ["variables[0]", "API_TOKEN", "new"],
      ["testCases[0]", "a", "new"],
      ["testPlans[0]", "p", "new"],
      [""],
    ]);
    expect(run.stderr).to.equal(
      [
        "imported: environments: 1 created, 0 changed, 0 unchanged; variables: 1 created, 0 changed, 0 unchanged; test cases: 1 created, 0 changed, 0 unchanged; test plans: 1 created, 0 changed, 0 unchanged. 0 test cases and 0 test plans of the project are not in the document and stay as they are.",
        "the document comes from another project: its ids were not used, items were matched by name",
        "1 variable has no value yet: API_TOKEN; set each with `testrunctl var set NAME` (steps naming one fail until it is set)",
        "",
      ].join("\n"),
    );
    const listed = await cli(["var", "list", "-p", project.id]);
    expect(listed.stdout).to.match(/^ID +NAME +VALUE +CREATED +UPDATED\nvar_\w+ +API_TOKEN +NOT SET +/);
    // Again: nothing new; then the value set, and nothing left to set.
    const again = await cli(["content", "import", "-p", project.id, "-f", file]);
    expect(again.stdout).to.not.match(/ new /);
    await json(["var", "set", "API_TOKEN", "-p", project.id], "b-token");
    const { variables } = await json<{ variables: Obj[] }>(["var", "list", "-p", project.id]);
    expect(variables.map((v) => [v.name, v.hasValue])).to.deep.equal([["API_TOKEN", true]]);
    const last = await cli(["content", "import", "-p", project.id, "-f", file, "--dry-run"]);
    expect(last.stderr).to.not.contain("no value");
    const { testPlans } = await json<{ testPlans: Obj[] }>(["plan", "list", "-p", project.id]);
    const { testCases } = await json<{ testCases: Obj[] }>(["case", "list", "-p", project.id]);
    expect(testPlans.map((plan) => plan.testCaseIds)).to.deep.equal([testCases.map((c) => c.id)]);
  });

  it("carries browser steps and recordTrace through case create, content export and import, with nothing special", async () => {
    const { project } = await orgAndProject();
    const file = join(dir, "browser.yaml");
    const browserSteps = [
      "    - name: open sign-in",
      "      browser: { goto: { url: /login } }",
      "    - name: email",
      "      browser: { fill: { locator: { label: Email }, value: '{{EMAIL}}' } }",
      "    - name: submit",
      "      browser: { click: { locator: { role: button, name: Sign in } }, timeoutMs: 5000 }",
      "    - name: spinner gone",
      "      browser: { waitFor: { locator: { testId: spinner }, state: detached } }",
      "    - name: greeting shown",
      "      browser: { expect: { locator: { testId: greeting }, text: Hello } }",
      "    - name: home",
      "      browser: { screenshot: { name: home, fullPage: true } }",
    ];
    await writeFile(
      file,
      [
        "- name: sign in",
        "  recordTrace: true",
        "  steps:",
        "    - name: session",
        "      http: { method: POST, path: /api/session }",
        "      save: { token: $.token }",
        ...browserSteps,
      ].join("\n"),
    );
    const { testCases } = await json<{ testCases: Obj[] }>(["case", "create", "-p", project.id, "-f", file]);
    expect(testCases.map((t) => [t.name, t.recordTrace])).to.deep.equal([["sign in", true]]);
    const listed = await json<{ testCases: Obj[] }>(["case", "list", "-p", project.id, "--steps"]);
    // As the catalog stored them (the CLI prints every field; defaults left out here to compare).
    const stored = ((listed.testCases[0]?.steps ?? []) as JsonValue[]).map((step) =>
      toJson(StepSchema, fromJson(StepSchema, step)),
    );
    expect(stored.slice(1)).to.deep.equal([
      { name: "open sign-in", browser: { goto: { url: "/login" } } },
      { name: "email", browser: { fill: { locator: { label: "Email" }, value: "{{EMAIL}}" } } },
      {
        name: "submit",
        browser: { click: { locator: { role: "button", name: "Sign in" } }, timeoutMs: 5000 },
      },
      {
        name: "spinner gone",
        browser: { waitFor: { locator: { testId: "spinner" }, state: "ELEMENT_STATE_DETACHED" } },
      },
      { name: "greeting shown", browser: { expect: { locator: { testId: "greeting" }, text: "Hello" } } },
      { name: "home", browser: { screenshot: { name: "home", fullPage: true } } },
    ]);

    // Exported as the file format, imported back unchanged; a change of recordTrace is a change.
    const exported = await cli(["content", "export", "-p", project.id]);
    expect(exported.code, exported.stderr).to.equal(0);
    expect(exported.stdout).to.contain("    recordTrace: true\n");
    expect(exported.stdout).to.contain(
      "          waitFor:\n            locator:\n              testId: spinner\n            state: detached\n",
    );
    const document = join(dir, "browser-content.yaml");
    await writeFile(document, exported.stdout);
    const same = await json<{ testCases: Obj[] }>(["content", "import", "-p", project.id, "-f", document]);
    expect(same.testCases.map((i) => i.outcome)).to.deep.equal(["ITEM_OUTCOME_UNCHANGED"]);
    await writeFile(document, exported.stdout.replace("    recordTrace: true\n", ""));
    const changed = await json<{ testCases: Obj[] }>(["content", "import", "-p", project.id, "-f", document]);
    expect(changed.testCases.map((i) => [i.outcome, i.changedFields])).to.deep.equal([
      ["ITEM_OUTCOME_CHANGED", ["recordTrace"]],
    ]);

    // A browser step the catalog refuses is named in the file's terms.
    await writeFile(
      file,
      "- name: bad\n  steps:\n    - name: s\n      browser: { waitFor: { locator: { testId: x, role: Button } } }\n",
    );
    const shape = await cli(["case", "create", "-p", project.id, "-f", file]);
    expect(shape.code).to.equal(2);
    expect(shape.stderr).to.equal(
      `error: ${file}: [0].steps[0].browser.waitFor.locator.testId: cannot be set together with "role": only one of role, label, text, placeholder, testId, css is set\n`,
    );
    await writeFile(
      file,
      "- name: bad\n  steps:\n    - name: s\n      browser: { waitFor: { locator: { role: Button } }, timeoutMs: -1 }\n",
    );
    const refused = await cli(["case", "create", "-p", project.id, "-f", file]);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(
      /^error: invalid argument: \[0\]\.steps\[0\]\.browser\.waitFor\.locator\.role: "Button" is not an ARIA role: roles are lower case \("button"\); \[0\]\.steps\[0\]\.browser\.timeoutMs: must be 0/,
    );
  });

  it("carries retries through case create, plan create --retries, content export and import", async () => {
    const { project } = await orgAndProject();
    const file = join(dir, "retries.yaml");
    await writeFile(
      file,
      "- name: flaky checkout\n  retries: 2\n  steps:\n    - name: s\n      http: { method: GET, path: / }\n",
    );
    const { testCases } = await json<{ testCases: Obj[] }>(["case", "create", "-p", project.id, "-f", file]);
    expect(testCases.map((t) => [t.name, t.retries])).to.deep.equal([["flaky checkout", 2]]);
    const plan = await json<{ testPlan: Obj }>([
      "plan",
      "create",
      "nightly",
      "-p",
      project.id,
      "--case",
      "flaky checkout",
      "--retries",
      "0",
    ]);
    expect(plan.testPlan.retries, "0 is the plan's own setting").to.equal(0);
    const bad = await cli(["plan", "create", "x", "-p", project.id, "--retries", "4"]);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain("--retries must be a whole number from 0 to 3");

    const exported = await cli(["content", "export", "-p", project.id]);
    expect(exported.code, exported.stderr).to.equal(0);
    expect(exported.stdout.match(/retries: \d/g)).to.deep.equal(["retries: 2", "retries: 0"]);
    const document = join(dir, "retries-content.yaml");
    await writeFile(document, exported.stdout);
    const same = await json<{ testCases: Obj[]; testPlans: Obj[] }>([
      "content",
      "import",
      "-p",
      project.id,
      "-f",
      document,
    ]);
    expect([...same.testCases, ...same.testPlans].map((i) => i.outcome)).to.deep.equal([
      "ITEM_OUTCOME_UNCHANGED",
      "ITEM_OUTCOME_UNCHANGED",
    ]);
    await writeFile(document, exported.stdout.replace("retries: 2", "retries: 3"));
    const changed = await json<{ testCases: Obj[] }>(["content", "import", "-p", project.id, "-f", document]);
    expect(changed.testCases.map((i) => [i.outcome, i.changedFields])).to.deep.equal([
      ["ITEM_OUTCOME_CHANGED", ["retries"]],
    ]);
  });

  it("refuses an import with a bad item, naming each problem by its path in the document, and writes nothing", async () => {
    const { project } = await orgAndProject();
    const file = join(dir, "bad-content.json");
    const step = (method: string, path = "/") => ({ name: "s", http: { method, path } });
    await writeFile(
      file,
      JSON.stringify({
        testCases: [
          { name: "fine", steps: [step("GET")] },
          { id: "tc_01jd0000000000000000000000", name: "unknown", steps: [step("GET")] },
          { name: "bad", steps: [step("FETCH", "nope")] },
        ],
        testPlans: [{ name: "p", testCases: ["fine", "missing"] }],
      }),
    );
    const run = await cli(["content", "import", "-p", project.id, "-f", file]);
    expect(run.code).to.equal(1);
    expect(run.stdout).to.equal("");
    expect(run.stderr).to.equal(
      "error: invalid argument: " +
        "testCases[1].id: tc_01jd0000000000000000000000 is not a test case of this project; " +
        "testCases[2].steps[0].http.method: must be one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS; " +
        'testCases[2].steps[0].http.path: must start with "/"; ' +
        'testPlans[0].testCases[1]: "missing" is neither the id nor the name of a test case of the project (as this import leaves it) ' +
        "(catalog ImportContent); nothing was imported\n",
    );
    expect((await json<{ testCases: Obj[] }>(["case", "list", "-p", project.id])).testCases).to.deep.equal(
      [],
    );
    // A file of test cases alone is not a content document: said before any call.
    const list = join(dir, "just-cases.yaml");
    await writeFile(list, "- name: a\n  steps: []\n");
    const notDocument = await cli(["content", "import", "-p", project.id, "-f", list]);
    expect(notDocument.code).to.equal(2);
    expect(notDocument.stderr).to.equal(
      `error: ${list}: the document is a list: a content document is an object whose testCases holds the test cases (and testPlans the plans)\n`,
    );
  });

  it("imports a folder of Playwright specs, one test case per spec file with the helpers it imports, matched by path on the next import", async () => {
    const { project } = await orgAndProject();
    const folder = join(dir, `specs-${randomBytes(3).toString("hex")}`);
    const put = async (path: string, source: string) => {
      await mkdir(join(folder, path, ".."), { recursive: true });
      await writeFile(join(folder, path), source);
    };
    const login =
      'import { test } from "@playwright/test";\nimport { LoginPage } from "../pages/login";\ntest("logs in", async () => {});\n';
    await put("tests/login.spec.ts", login);
    await put(
      "tests/cart.test.js",
      'const { test } = require("@playwright/test");\ntest("empty cart", () => {});\n',
    );
    await put("pages/login.ts", "export class LoginPage {}\n");
    await put("playwright.config.ts", "export default {};\n");
    await put("node_modules/some-package/index.spec.ts", "not ours\n");

    type Imported = { testCases: { name: string; outcome: string; changedFields?: string[]; id: string }[] };
    const first = await json<Imported>(["content", "import", "-p", project.id, "--specs", folder]);
    expect(first.testCases.map((c) => [c.name, c.outcome])).to.deep.equal([
      ["tests/cart.test.js", "ITEM_OUTCOME_CREATED"],
      ["tests/login.spec.ts", "ITEM_OUTCOME_CREATED"],
    ]);
    const loginId = first.testCases[1]?.id ?? "";
    // As the project now holds it: the export carries the spec and the helper it imports, no other file.
    const exported = await cli(["content", "export", "-p", project.id, "--format", "json"]);
    const cases = JSON.parse(exported.stdout).testCases as { id: string; playwright: object }[];
    expect(cases.find((c) => c.id === loginId)?.playwright).to.deep.equal({
      spec: { path: "tests/login.spec.ts", source: login },
      files: [{ path: "pages/login.ts", source: "export class LoginPage {}\n" }],
    });

    // After a commit that changes a helper: the spec importing it changes, the other does not.
    await put("pages/login.ts", "export class LoginPage { open() {} }\n");
    const second = await json<Imported>(["content", "import", "-p", project.id, "--specs", folder]);
    expect(second.testCases.map((c) => [c.name, c.outcome, c.changedFields ?? []])).to.deep.equal([
      ["tests/cart.test.js", "ITEM_OUTCOME_UNCHANGED", []],
      ["tests/login.spec.ts", "ITEM_OUTCOME_CHANGED", ["playwright"]],
    ]);
    expect(second.testCases[1]?.id).to.equal(loginId);

    // A spec past its bound: refused by the catalog, naming it; nothing written.
    await put("tests/huge.spec.ts", `// ${"x".repeat(256 * 1024)}\n`);
    const refused = await cli(["content", "import", "-p", project.id, "--specs", folder]);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include(
      "testCases[1].playwright.spec.source: must be at most 256 KiB (got 262148 bytes)",
    );
    const neither = await cli(["content", "import", "-p", project.id]);
    expect(neither.code).to.equal(2);
    expect(neither.stderr).to.equal("error: give either --file <document> or --specs <folder>\n");
  });

  it("keeps to a document's bounds: 8 MiB of items refused before sending, no export past 500 test cases", async () => {
    const { project } = await orgAndProject();
    const file = join(dir, "bounds.json");
    const testCase = (name: string, raw = "") => ({
      name,
      steps: [{ name: "s", http: { method: "PUT", path: "/p", ...(raw && { raw }) } }],
    });
    // Nine test cases with a 1 MiB body each (each within the step rules): 9 MiB of items.
    await writeFile(
      file,
      JSON.stringify({
        testCases: Array.from({ length: 9 }, (_, i) => testCase(`big ${i}`, "x".repeat(1024 * 1024))),
      }),
    );
    const large = await cli(["content", "import", "-p", project.id, "-f", file]);
    expect(large.code).to.equal(2);
    expect(large.stderr).to.equal(
      "error: the document is too large to import at once: its items come to 9.0 MiB, and the catalog takes at most 8.0 MiB in one call; split it into several documents\n",
    );

    for (const [from, count] of [
      [0, 500],
      [500, 1],
    ] as const) {
      await writeFile(
        file,
        JSON.stringify({ testCases: Array.from({ length: count }, (_, i) => testCase(`case ${from + i}`)) }),
      );
      const imported = await cli(["content", "import", "-p", project.id, "-f", file]);
      expect(imported.code, imported.stderr).to.equal(0);
    }
    const exported = await cli(["content", "export", "-p", project.id]);
    expect(exported.code).to.equal(1);
    expect(exported.stderr).to.equal(
      'error: the project has more than 500 test cases, more than a content document holds (docs/runs.md, "Content documents")\n',
    );
  });

  it("creates the test cases of an exported document with case create, saying ids are not kept and plans need content import", async () => {
    const { project } = await orgAndProject();
    const source = (await orgAndProject()).project;
    const file = join(dir, "seed.yaml");
    await writeFile(file, "- name: a\n  steps: [{ name: s, http: { method: GET, path: /a } }]\n");
    await json(["case", "create", "-p", source.id, "-f", file]);
    await json(["plan", "create", "p", "-p", source.id, "--case", "a"]);
    const exported = await cli(["content", "export", "-p", source.id]);
    await writeFile(file, exported.stdout);
    const run = await cli(["case", "create", "-p", project.id, "-f", file]);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/^ID +NAME +TAGS +ENABLED +CREATED\ntc_\w+ +a +- +yes +/);
    expect(run.stderr).to.equal(
      "note: 1 of the file's test cases name an id: create makes new test cases and cannot keep ids; `testrunctl content import` updates the test cases the ids name instead\n" +
        "note: the file's test plan was not created: test plans are imported with `testrunctl content import`\n",
    );
    const created = (await json<{ testCases: Obj[] }>(["case", "list", "-p", project.id])).testCases;
    expect(created.map((c) => c.name)).to.deep.equal(["a"]);
    expect((await json<{ testPlans: Obj[] }>(["plan", "list", "-p", project.id])).testPlans).to.deep.equal(
      [],
    );
  });

  it("sets, replaces, lists and deletes variables without ever showing a value", async () => {
    const { project } = await orgAndProject();
    const fromStdin = `stdin-${randomBytes(12).toString("hex")}`;
    const fromFlag = `flag-${randomBytes(12).toString("hex")}`;
    const replaced = `replaced-${randomBytes(12).toString("hex")}`;

    const created = await json<{ variable: Obj; created: boolean }>(
      ["var", "set", "PASSWORD", "-p", project.id],
      `${fromStdin}\n`,
    );
    expect(created.created).to.equal(true);
    expect(created.variable).to.have.all.keys(
      "id",
      "projectId",
      "name",
      "createdAt",
      "updatedAt",
      "hasValue",
    );
    expect(created.variable.hasValue).to.equal(true);
    const human = await cli(["var", "set", "API_TOKEN", "-p", project.id, "--value", fromFlag]);
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stderr).to.equal("created variable API_TOKEN\n");

    const again = await json<{ variable: Obj; created: boolean }>(
      ["var", "set", "password", "-p", project.id],
      replaced,
    );
    expect(again.created).to.equal(false);
    expect(again.variable.id).to.equal(created.variable.id);

    const { variables } = await json<{ variables: Obj[] }>(["var", "list", "-p", project.id]);
    expect(variables.map((v) => v.name)).to.deep.equal(["PASSWORD", "API_TOKEN"]);
    expect((await cli(["var", "list", "-p", project.id])).code).to.equal(0);

    const deleted = await json<{ variable: Obj }>(["var", "delete", "api_token", "-p", project.id]);
    expect(deleted.variable.name).to.equal("API_TOKEN");
    const missing = await cli(["var", "delete", "API_TOKEN", "-p", project.id]);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.equal('error: the project has no variable "API_TOKEN"\n');

    // A value the catalog refuses (over 8192 bytes) is refused without being quoted.
    const huge = `huge-${"x".repeat(9000)}`;
    const refused = await cli(["var", "set", "HUGE", "-p", project.id], { stdin: huge });
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(/^error: invalid argument: .+\(catalog CreateVariable\)\n$/);

    for (const value of [fromStdin, fromFlag, replaced, huge]) {
      for (const output of outputs) expect(output).not.to.include(value);
      for (const service of services) expect(service.output().join("\n")).not.to.include(value);
    }
  });

  it("creates a key whose secret is printed once, lists keys without it, and revokes one", async () => {
    const { project, owner } = await orgAndProject();
    const created = await cli([
      "key",
      "create",
      "ci: shop",
      "-p",
      project.id,
      "--creator",
      owner.id,
      "--json",
    ]);
    expect(created.code, created.stderr).to.equal(0);
    const { key, secret } = JSON.parse(created.stdout) as { key: Obj; secret: string };
    expect(secret).to.match(/^trk_[0-9A-Za-z]{46}$/);
    expect(key).to.include({
      projectId: project.id,
      name: "ci: shop",
      displayPrefix: secret.slice(0, 12),
      creatorMemberId: owner.id,
      state: "KEY_STATE_ACTIVE",
      expiry: "KEY_EXPIRY_DAYS_90",
    });
    expect(created.stdout.split(secret)).to.have.length(2); // exactly once
    expect(created.stderr).to.match(/shown this once .* store it in a secret store/);

    const human = await cli([
      "key",
      "create",
      "agent",
      "-p",
      project.id,
      "--creator",
      owner.id,
      "--expiry",
      "never",
    ]);
    expect(human.code, human.stderr).to.equal(0);
    const humanSecret = /^secret: (trk_\S+)$/m.exec(human.stdout)?.[1] ?? "";
    expect(humanSecret).to.match(/^trk_[0-9A-Za-z]{46}$/);
    expect(human.stdout.split(humanSecret)).to.have.length(2);
    expect(human.stdout).to.include(`${humanSecret.slice(0, 12)}…`);

    const listed = await cli(["key", "list", "-p", project.id, "--json"]);
    const { keys } = JSON.parse(listed.stdout) as { keys: Obj[] };
    expect(keys.map((k) => [k.name, k.expiry])).to.deep.equal([
      ["ci: shop", "KEY_EXPIRY_DAYS_90"],
      ["agent", "KEY_EXPIRY_NEVER"],
    ]);
    const listedHuman = await cli(["key", "list", "-p", project.id]);
    for (const output of [listed.stdout, listed.stderr, listedHuman.stdout, listedHuman.stderr]) {
      expect(output).not.to.include(secret);
      expect(output).not.to.include(humanSecret);
    }
    expect(listedHuman.stdout).to.include(`${secret.slice(0, 12)}…`);

    const revoked = await json<{ key: Obj }>(["key", "revoke", key.id, "-p", project.id]);
    expect(revoked.key.state).to.equal("KEY_STATE_REVOKED");
    const remaining = await json<{ keys: Obj[] }>(["key", "list", "-p", project.id]);
    expect(remaining.keys.map((k) => k.name)).to.deep.equal(["agent"]);
    const withRevoked = await json<{ keys: Obj[] }>(["key", "list", "-p", project.id, "--include-revoked"]);
    expect(withRevoked.keys.map((k) => [k.name, k.state])).to.deep.equal([
      ["ci: shop", "KEY_STATE_REVOKED"],
      ["agent", "KEY_STATE_ACTIVE"],
    ]);

    // Secrets never reach an error: an operator must name the creator, a viewer cannot create keys.
    const { member: viewer } = await json<{ member: Obj }>([
      "member",
      "add",
      "--org",
      String(project.organizationId),
      "--email",
      "vi@acme.test",
      "--name",
      "Vi",
      "--role",
      "viewer",
    ]);
    const denied = await cli(["key", "create", "x", "-p", project.id, "--creator", viewer.id]);
    expect(denied.code).to.equal(1);
    expect(denied.stderr).to.match(/^error: permission denied: .+ \(keys CreateKey\)\n$/);

    // A content token (import only) is created and listed with --kind content, apart from the keys.
    const token = await cli([
      "key",
      "create",
      "push specs",
      "-p",
      project.id,
      "--creator",
      owner.id,
      "--kind",
      "content",
    ]);
    expect(token.code, token.stderr).to.equal(0);
    const tokenSecret = /^secret: (trc_\S+)$/m.exec(token.stdout)?.[1] ?? "";
    expect(tokenSecret).to.match(/^trc_[0-9A-Za-z]{46}$/);
    const tokens = await json<{ keys: Obj[] }>(["key", "list", "-p", project.id, "--kind", "content"]);
    expect(tokens.keys.map((k) => [k.name, k.kind])).to.deep.equal([
      ["push specs", "KEY_KIND_CONTENT_TOKEN"],
    ]);
    expect(
      (await json<{ keys: Obj[] }>(["key", "list", "-p", project.id])).keys.map((k) => k.name),
    ).to.deep.equal(["agent"]);
  });

  it("grants credits idempotently, and shows the balance and the ledger", async () => {
    const { project } = await orgAndProject();
    const grant = [
      "credits",
      "grant",
      "250",
      "-p",
      project.id,
      "--reason",
      "invoice 7",
      "--idempotency-key",
      "inv-7",
    ];
    const first = await json<{ entry: Obj; balance: string }>(grant);
    expect(first.balance).to.equal("250");
    expect(first.entry).to.include({ kind: "LEDGER_ENTRY_KIND_GRANT", amount: "250", reason: "invoice 7" });
    const retried = await json<{ entry: Obj; balance: string }>(grant);
    expect(retried).to.deep.equal(first);
    await json(["credits", "grant", "50", "-p", project.id, "--reason", "goodwill"]);

    expect(await json(["credits", "balance", "-p", project.id])).to.deep.equal({
      projectId: project.id,
      balance: "300",
    });
    const human = await cli(["credits", "balance", "-p", project.id]);
    expect(human.stdout).to.equal("300\n");

    const { entries } = await json<{ entries: Obj[] }>(["credits", "ledger", "-p", project.id]);
    expect(entries.map((e) => [e.amount, e.balanceAfter, e.reason])).to.deep.equal([
      ["50", "300", "goodwill"],
      ["250", "250", "invoice 7"],
    ]);
    const limited = await json<{ entries: Obj[] }>(["credits", "ledger", "-p", project.id, "--limit", "1"]);
    expect(limited.entries).to.have.length(1);
  });

  it("reports a refusal, an unknown project and a wrong token as one line with exit code 1", async () => {
    const unknownProject = await cli(["env", "list", "-p", "prj_00000000000000000000000000"], { bin: true });
    expect(unknownProject.code).to.equal(1);
    expect(unknownProject.stdout).to.equal("");
    expect(unknownProject.stderr).to.match(/^error: not found: .+ \(catalog ListEnvironments\)\n$/);

    const wrongToken = await cli(["org", "list"], { env: { ...cliEnv, SERVICE_TOKEN: "w".repeat(40) } });
    expect(wrongToken.code).to.equal(1);
    expect(wrongToken.stderr).to.equal(
      "error: the catalog service refused the service token: check SERVICE_TOKEN (ListOrganizations)\n",
    );
  });
});
