import { fromJson, toJson } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { httpStepOf } from "@testrun/content-file";
import { EnvironmentSchema, Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { type Step, StepSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
import { FieldViolationsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import { newId } from "@testrun/kit";
import {
  apiKey,
  type Catalog,
  httpStep,
  type InProcessCatalog,
  member,
  newProject,
  operator,
  rejects,
  runServiceCommand,
  seedOrganization,
  startInProcessCatalog,
  unique,
} from "@testrun/testing";
import { expect } from "chai";

/** Field paths of the FieldViolations detail of an INVALID_ARGUMENT error. */
async function violatedFields(call: Promise<unknown>): Promise<{ fields: string[]; message: string }> {
  const error = await rejects(call, Code.InvalidArgument);
  const [detail] = error.findDetails(FieldViolationsSchema);
  return { fields: detail?.violations.map((v) => v.field) ?? [], message: error.rawMessage };
}

describe("catalog: project content", () => {
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

  describe("another project's items are NOT_FOUND", () => {
    let here: string;
    let there: string;
    const ids = { env: "", plan: "", testCase: "", variable: "" };

    before(async () => {
      here = await project();
      there = await project();
      ids.env = (
        await catalog.createEnvironment({
          actor: editor,
          projectId: there,
          name: "prod",
          baseUrl: "https://e.io",
        })
      ).environment?.id as string;
      ids.testCase = (
        await catalog.createTestCase({
          actor: editor,
          projectId: there,
          name: "t",
          tags: ["a"],
          steps: [httpStep()],
        })
      ).testCase?.id as string;
      ids.plan = (
        await catalog.createTestPlan({
          actor: editor,
          projectId: there,
          name: "p",
          description: "",
          testCaseIds: [ids.testCase],
        })
      ).testPlan?.id as string;
      ids.variable = (
        await catalog.createVariable({ actor: editor, projectId: there, name: "V", value: "v-there" })
      ).variable?.id as string;
      await catalog.createEnvironment({
        actor: editor,
        projectId: here,
        name: "prod",
        baseUrl: "https://h.io",
      });
    });

    it("for every id kind, through every RPC that takes one, for members and operators", async () => {
      for (const actor of [editor, operator()]) {
        const projectId = here;
        const calls: [string, () => Promise<unknown>][] = [
          ["GetEnvironment", () => catalog.getEnvironment({ actor, projectId, environmentId: ids.env })],
          [
            "UpdateEnvironment",
            () => catalog.updateEnvironment({ actor, projectId, environmentId: ids.env, name: "x" }),
          ],
          [
            "DeleteEnvironment",
            () => catalog.deleteEnvironment({ actor, projectId, environmentId: ids.env }),
          ],
          ["GetTestPlan", () => catalog.getTestPlan({ actor, projectId, testPlanId: ids.plan })],
          [
            "UpdateTestPlan",
            () => catalog.updateTestPlan({ actor, projectId, testPlanId: ids.plan, name: "x" }),
          ],
          ["DeleteTestPlan", () => catalog.deleteTestPlan({ actor, projectId, testPlanId: ids.plan })],
          ["GetTestCase", () => catalog.getTestCase({ actor, projectId, testCaseId: ids.testCase })],
          [
            "UpdateTestCase",
            () => catalog.updateTestCase({ actor, projectId, testCaseId: ids.testCase, name: "x" }),
          ],
          ["DeleteTestCase", () => catalog.deleteTestCase({ actor, projectId, testCaseId: ids.testCase })],
          ["GetVariable", () => catalog.getVariable({ actor, projectId, variableId: ids.variable })],
          [
            "UpdateVariable",
            () => catalog.updateVariable({ actor, projectId, variableId: ids.variable, name: "W" }),
          ],
          ["DeleteVariable", () => catalog.deleteVariable({ actor, projectId, variableId: ids.variable })],
          [
            "CreateTestPlan with its test case",
            () =>
              catalog.createTestPlan({
                actor,
                projectId,
                name: "p",
                description: "",
                testCaseIds: [ids.testCase],
              }),
          ],
          [
            "ResolveRunSelection with its environment",
            () =>
              catalog.resolveRunSelection({
                actor,
                projectId,
                environment: ids.env,
                selection: { case: "tags", value: { tags: ["a"] } },
              }),
          ],
          [
            "ResolveRunSelection with its plan",
            () =>
              catalog.resolveRunSelection({
                actor,
                projectId,
                selection: { case: "testPlan", value: ids.plan },
              }),
          ],
          [
            "ResolveRunSelection with its test case",
            () =>
              catalog.resolveRunSelection({
                actor,
                projectId,
                selection: { case: "testCaseIds", value: { ids: [ids.testCase] } },
              }),
          ],
        ];
        for (const [name, call] of calls) {
          const error = await rejects(call(), Code.NotFound).catch((e: Error) => {
            throw new Error(`${name}: ${e.message}`);
          });
          expect(error.rawMessage, name).to.not.contain("v-there");
        }
      }
      // Nothing of the other project changed.
      const plan = await catalog.getTestPlan({ actor: operator(), projectId: there, testPlanId: ids.plan });
      expect(plan.testPlan).to.include({ name: "p", testCaseCount: 1 });
    });

    it("for an API key, every RPC about another project, and every id of another project", async () => {
      const key = apiKey(seed.members.editor, here, new Date(Date.now() - 1000));
      const other = { actor: key, projectId: there };
      const calls: [string, () => Promise<unknown>][] = [
        ["CheckAccess", () => catalog.checkAccess({ ...other, permission: Permission.READ })],
        ["GetProject", () => catalog.getProject({ ...other, includeContents: true })],
        ["ListEnvironments", () => catalog.listEnvironments(other)],
        ["ListTestPlans", () => catalog.listTestPlans(other)],
        ["ListTestCases", () => catalog.listTestCases(other)],
        ["GetEnvironment", () => catalog.getEnvironment({ ...other, environmentId: ids.env })],
        ["GetTestPlan", () => catalog.getTestPlan({ ...other, testPlanId: ids.plan })],
        ["GetTestCase", () => catalog.getTestCase({ ...other, testCaseId: ids.testCase })],
        [
          "ResolveRunSelection",
          () => catalog.resolveRunSelection({ ...other, selection: { case: "testPlan", value: ids.plan } }),
        ],
        // Its own project, with ids of the other one.
        [
          "GetEnvironment here",
          () => catalog.getEnvironment({ actor: key, projectId: here, environmentId: ids.env }),
        ],
        [
          "GetTestPlan here",
          () => catalog.getTestPlan({ actor: key, projectId: here, testPlanId: ids.plan }),
        ],
        [
          "GetTestCase here",
          () => catalog.getTestCase({ actor: key, projectId: here, testCaseId: ids.testCase }),
        ],
        [
          "ResolveRunSelection here",
          () =>
            catalog.resolveRunSelection({
              actor: key,
              projectId: here,
              selection: { case: "testCaseIds", value: { ids: [ids.testCase] } },
            }),
        ],
      ];
      for (const [name, call] of calls) {
        await rejects(call(), Code.NotFound).catch((e: Error) => {
          throw new Error(`${name}: ${e.message}`);
        });
      }
      // A list by ids of the other project's test cases, in its own project: none of them.
      const listed = await catalog.listTestCases({
        actor: key,
        projectId: here,
        testCaseIds: [ids.testCase],
      });
      expect(listed.testCases).to.deep.equal([]);
      // Its own project answers.
      const own = await catalog.getProject({ actor: key, projectId: here, includeContents: true });
      expect(own.environments.map((e) => e.baseUrl)).to.deep.equal(["https://h.io"]);
    });

    it("for ids of the wrong shape and projects that do not exist", async () => {
      for (const projectId of ["", "prj_nope", "env_01jd3k0000000000000000000", "x' or '1'='1"]) {
        await rejects(catalog.getProject({ actor: operator(), projectId }), Code.NotFound);
      }
      await rejects(
        catalog.getTestCase({ actor: editor, projectId: here, testCaseId: "not an id" }),
        Code.NotFound,
      );
      // Text PostgreSQL cannot hold is refused up front, whatever the field.
      const nul = await rejects(
        catalog.listTestCases({ actor: editor, projectId: here, tags: ["a\u0000b"] }),
        Code.InvalidArgument,
      );
      expect(nul.rawMessage).to.equal("text in the request must not contain NUL characters");
      await rejects(catalog.getProject({ actor: operator(), projectId: "prj_\u0000" }), Code.InvalidArgument);
    });
  });

  describe("environments", () => {
    const defaults = async (projectId: string) =>
      (await catalog.listEnvironments({ actor: editor, projectId })).environments
        .filter((e) => e.isDefault)
        .map((e) => e.name);

    it("are listed oldest first, each exactly as GetEnvironment answers it", async () => {
      const projectId = await project();
      const created = [];
      for (const name of ["zeta", "alpha", "mid"])
        created.push(
          (
            await catalog.createEnvironment({
              actor: editor,
              projectId,
              name,
              baseUrl: `https://${name}.example.com/base`,
              isDefault: name === "alpha",
            })
          ).environment,
        );
      const listed = (await catalog.listEnvironments({ actor: editor, projectId })).environments;
      expect(listed.map((e) => e.name)).to.deep.equal(["zeta", "alpha", "mid"]);
      for (const [i, environment] of listed.entries()) {
        const read = await catalog.getEnvironment({
          actor: editor,
          projectId,
          environmentId: environment.id,
        });
        expect(toJson(EnvironmentSchema, environment)).to.deep.equal(
          read.environment && toJson(EnvironmentSchema, read.environment),
        );
        expect(environment.id).to.equal(created[i]?.id);
      }
    });

    it("have at most one default per project", async () => {
      const projectId = await project();
      const add = (name: string, isDefault: boolean) =>
        catalog.createEnvironment({
          actor: editor,
          projectId,
          name,
          baseUrl: `https://${name}.example.com`,
          isDefault,
        });
      await add("a", true);
      expect(await defaults(projectId)).to.deep.equal(["a"]);
      const b = await add("b", true);
      expect(await defaults(projectId)).to.deep.equal(["b"]);
      const c = await add("c", false);
      expect(await defaults(projectId)).to.deep.equal(["b"]);
      await catalog.updateEnvironment({
        actor: editor,
        projectId,
        environmentId: c.environment?.id,
        isDefault: true,
      });
      expect(await defaults(projectId)).to.deep.equal(["c"]);
      // Setting true again on the default changes nothing; false leaves the project without one.
      await catalog.updateEnvironment({
        actor: editor,
        projectId,
        environmentId: c.environment?.id,
        isDefault: true,
      });
      expect(await defaults(projectId)).to.deep.equal(["c"]);
      await catalog.updateEnvironment({
        actor: editor,
        projectId,
        environmentId: c.environment?.id,
        isDefault: false,
      });
      expect(await defaults(projectId)).to.deep.equal([]);
      // Unset fields are left as they are.
      const renamed = await catalog.updateEnvironment({
        actor: editor,
        projectId,
        environmentId: b.environment?.id,
        name: "b2",
      });
      expect(renamed.environment).to.include({
        name: "b2",
        baseUrl: "https://b.example.com",
        isDefault: false,
      });
    });

    it("keep one default when many are made default at once", async () => {
      const projectId = await project();
      await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          catalog.createEnvironment({
            actor: editor,
            projectId,
            name: `env ${i}`,
            baseUrl: "https://x.example.com",
            isDefault: true,
          }),
        ),
      );
      expect(await defaults(projectId)).to.have.length(1);
      const stored = await h.db.query(
        "select count(*)::int as n from catalog.environments where project_id = $1 and is_default",
        [projectId],
      );
      expect(stored.rows[0].n).to.equal(1);
    });

    it("have a base URL that is absolute http(s), without query or fragment, stored without a trailing slash", async () => {
      const projectId = await project();
      const created = await catalog.createEnvironment({
        actor: editor,
        projectId,
        name: "  trimmed  ",
        baseUrl: "https://api.example.com/v2/",
      });
      expect(created.environment).to.include({ name: "trimmed", baseUrl: "https://api.example.com/v2" });
      for (const [baseUrl, rule] of [
        ["ftp://example.com", "http:// or https://"],
        ["/relative", "http:// or https://"],
        ["https://example.com/?a=1", "query"],
        ["https://example.com/#top", "fragment"],
        [`https://example.com/${"a".repeat(2040)}`, "2048"],
        ["https://ci:s3cret-pw@example.com/api", "credentials in variables"],
        ["https://:s3cret-pw@example.com", "credentials in variables"],
        ["http://ci@example.com", "credentials in variables"],
        ["https://@example.com", "credentials in variables"],
      ] as const) {
        const { fields, message } = await violatedFields(
          catalog.createEnvironment({ actor: editor, projectId, name: "x", baseUrl }),
        );
        expect(fields).to.deep.equal(["base_url"]);
        expect(message).to.contain(rule);
        expect(message).not.to.contain("s3cret");
      }
      // Nor by an update.
      const updated = await violatedFields(
        catalog.updateEnvironment({
          actor: editor,
          projectId,
          environmentId: created.environment?.id ?? "",
          baseUrl: "https://ci:s3cret-pw@api.example.com",
        }),
      );
      expect(updated.fields).to.deep.equal(["base_url"]);
      // A path may hold an @ (it is no user name there).
      const at = await catalog.createEnvironment({
        actor: editor,
        projectId,
        name: "at",
        baseUrl: "https://example.com/@team",
      });
      expect(at.environment?.baseUrl).to.equal("https://example.com/@team");
      const both = await violatedFields(
        catalog.createEnvironment({ actor: editor, projectId, name: " ", baseUrl: "" }),
      );
      expect(both.fields).to.deep.equal(["name", "base_url"]);
      expect(both.message).to.equal("name: is required (and 1 more)");
      expect((await catalog.listEnvironments({ actor: editor, projectId })).environments).to.have.length(2);
    });
  });

  describe("environments stored with a user name and password, before they were refused", () => {
    it("lose them when the catalog migrates, and nobody reads them afterwards", async () => {
      const projectId = await project();
      const stored = async (baseUrl: string) => {
        const id = newId("env");
        await h.db.query(
          `insert into catalog.environments (id, project_id, name, base_url, is_default, created_at, updated_at)
           values ($1, $2, $3, $4, false, now(), now())`,
          [id, projectId, unique("old"), baseUrl],
        );
        return id;
      };
      const ids = [
        await stored("https://ci:s3cret-pw@shop.test/api"),
        await stored("http://a@b:s3cret-pw@shop.test:8080"),
        await stored("https://shop.test/@team"),
      ];
      // The migration again, as on an installation that has such rows.
      const migration = "Migration20261124232000_base_url_without_userinfo";
      await h.db.query("delete from catalog.mikro_orm_migrations where name = $1", [migration]);
      await runServiceCommand("catalog", ["migrate"], h.env);
      const { environments } = await catalog.listEnvironments({ actor: editor, projectId });
      const byId = new Map(environments.map((e) => [e.id, e.baseUrl]));
      expect(ids.map((id) => byId.get(id))).to.deep.equal([
        "https://shop.test/api",
        "http://shop.test:8080",
        "https://shop.test/@team",
      ]);
      const left = await h.db.query(
        "select count(*)::int as n from catalog.environments where base_url like $1",
        ["%s3cret%"],
      );
      expect(left.rows[0].n).to.equal(0);
    });
  });

  describe("test cases", () => {
    it("keep valid steps exactly as written", async () => {
      const projectId = await project();
      const steps = [
        fromJson(StepSchema, {
          name: "log in",
          http: {
            request: {
              method: "POST",
              path: "/api/login",
              headers: { "X-Trace": "1" },
              query: { lang: "en" },
              json: { user: "{{USER}}", password: "{{PASSWORD}}", remember: true, tries: [1, 2] },
              timeoutMs: 10000,
            },
            expect: {
              status: [200, 201],
              headers: { "content-type": "application/json" },
              bodyContains: ["welcome"],
              json: { "$.ok": true, "$.user['name']": "ann" },
              maxDurationMs: 2000,
            },
            save: { token: "$.token", first: "$.items[0].id" },
          },
        }),
        fromJson(StepSchema, { name: "raw", http: { request: { method: "PUT", path: "/x", raw: "a,b\n" } } }),
      ];
      const { testCase } = await catalog.createTestCase({
        actor: editor,
        projectId,
        name: "login",
        tags: ["Smoke", " api ", "smoke"],
        steps,
      });
      expect(testCase).to.include({ name: "login", enabled: true });
      expect(testCase?.tags).to.deep.equal(["Smoke", "api"]);
      const read = await catalog.getTestCase({ actor: editor, projectId, testCaseId: testCase?.id });
      expect(read.testCase?.steps.map((s) => toJson(StepSchema, s))).to.deep.equal(
        steps.map((s) => toJson(StepSchema, s)),
      );
    });

    it("refuse invalid steps with INVALID_ARGUMENT naming every bad field, and write nothing", async () => {
      const projectId = await project();
      const step = (json: unknown): Step => fromJson(StepSchema, json as never);
      const steps = [
        step({ name: "bad method", http: { request: { method: "get", path: "/x" } } }),
        step({ name: "bad path", http: { request: { method: "GET", path: "x" } } }),
        step({ name: "no kind" }),
        step({
          name: "",
          http: { request: { method: "GET", path: "/", headers: { Host: "evil", "Bad Name": "1" } } },
        }),
        step({ name: "body on GET", http: { request: { method: "GET", path: "/", json: { a: 1 } } } }),
        step({
          name: "bad expectations",
          http: {
            request: { method: "POST", path: "/", timeoutMs: 120001 },
            expect: { status: [200, 99], json: { "items[0]": 1 }, maxDurationMs: -1 },
            save: { "1bad": "$.a", good: "no-dollar" },
          },
        }),
        step({ name: "no request", http: {} }),
      ];
      const { fields, message } = await violatedFields(
        catalog.createTestCase({ actor: editor, projectId, name: "t", tags: ["ok", ""], steps }),
      );
      expect(fields).to.deep.equal([
        "tags[1]",
        "steps[0].http.request.method",
        "steps[1].http.request.path",
        "steps[2]",
        "steps[3].name",
        'steps[3].http.request.headers["Host"]',
        'steps[3].http.request.headers["Bad Name"]',
        "steps[4].http.request.json",
        "steps[5].http.request.timeout_ms",
        "steps[5].http.expect.status[1]",
        'steps[5].http.expect.json["items[0]"]',
        "steps[5].http.expect.max_duration_ms",
        'steps[5].http.save["1bad"]',
        'steps[5].http.save["good"]',
        "steps[6].http.request",
      ]);
      expect(message).to.equal("tags[1]: must not be empty (and 14 more)");
      const none = await violatedFields(
        catalog.createTestCase({ actor: editor, projectId, name: "t", steps: [] }),
      );
      expect(none.fields).to.deep.equal(["steps"]);
      expect(none.message).to.equal("steps: must hold 1 to 100 steps (got 0)");
      expect((await catalog.listTestCases({ actor: editor, projectId })).testCases).to.have.length(0);

      // Updates name the fields as they sit in UpdateTestCaseRequest.
      const { testCase } = await catalog.createTestCase({
        actor: editor,
        projectId,
        name: "t",
        steps: [httpStep()],
      });
      const update = await violatedFields(
        catalog.updateTestCase({
          actor: editor,
          projectId,
          testCaseId: testCase?.id,
          name: "renamed",
          steps: { steps: [httpStep("no-slash")] },
          tags: { tags: ["x".repeat(65)] },
        }),
      );
      expect(update.fields).to.deep.equal(["tags.tags[0]", "steps.steps[0].http.request.path"]);
      const unchanged = await catalog.getTestCase({ actor: editor, projectId, testCaseId: testCase?.id });
      expect(unchanged.testCase?.name).to.equal("t");
    });

    it("change only the fields set", async () => {
      const projectId = await project();
      const { testCase } = await catalog.createTestCase({
        actor: editor,
        projectId,
        name: "t",
        tags: ["a"],
        steps: [httpStep("/one")],
      });
      const id = testCase?.id;
      const disabled = await catalog.updateTestCase({
        actor: editor,
        projectId,
        testCaseId: id,
        enabled: false,
      });
      expect(disabled.testCase).to.include({ name: "t", enabled: false });
      expect(disabled.testCase?.tags).to.deep.equal(["a"]);
      const cleared = await catalog.updateTestCase({
        actor: editor,
        projectId,
        testCaseId: id,
        tags: { tags: [] },
      });
      expect(cleared.testCase?.tags).to.deep.equal([]);
      expect(httpStepOf(cleared.testCase?.steps[0])?.request?.path).to.equal("/one");
    });
    it("are found by the {{NAME}} their steps use, wherever they use it, and the exact name only", async () => {
      const projectId = await project();
      const step = (
        request: Record<string, unknown>,
        expect: Record<string, unknown> = { status: [200] },
      ) => ({
        name: "call",
        kind: { case: "http" as const, value: { request: { method: "GET", path: "/", ...request }, expect } },
      });
      const cases = {
        path: [step({ path: "/users/{{TOKEN}}" })],
        header: [step({ headers: { authorization: "Bearer {{TOKEN}}" } })],
        expectation: [httpStep("/a"), step({}, { status: [200], bodyContains: ["{{TOKEN}}"] })],
        longerName: [step({ path: "/{{TOKEN_2}}" })],
        otherCase: [step({ path: "/{{token}}" })],
        none: [httpStep("/TOKEN")],
      };
      for (const [name, steps] of Object.entries(cases))
        await catalog.createTestCase({ actor: editor, projectId, name, steps });
      const using = await catalog.listTestCases({ actor: editor, projectId, usesVariable: "TOKEN" });
      expect(using.testCases.map((t) => t.name)).to.deep.equal(["path", "header", "expectation"]);
      expect(using.truncated).to.equal(false);
      // AND-ed with the other filters; an empty name is no filter; a name no variable can have is refused.
      const searched = await catalog.listTestCases({
        actor: editor,
        projectId,
        usesVariable: "TOKEN",
        search: "head",
      });
      expect(searched.testCases.map((t) => t.name)).to.deep.equal(["header"]);
      expect(
        (await catalog.listTestCases({ actor: editor, projectId, usesVariable: "" })).testCases,
      ).to.have.length(6);
      const bad = await violatedFields(
        catalog.listTestCases({ actor: editor, projectId, usesVariable: "A}}" }),
      );
      expect(bad.fields).to.deep.equal(["uses_variable"]);
    });
  });

  describe("listing test cases: tags, search and the 500 cap", () => {
    let projectId: string;
    const total = 501;
    const smoke = (i: number) => i % 3 === 0;
    const login = (i: number) => i % 5 === 0;

    before(async function () {
      this.timeout(120_000);
      projectId = await project();
      // Created in parallel batches: 501 sequential calls would be slow for no benefit.
      for (let start = 0; start < total; start += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, total - start) }, (_, k) => {
            const i = start + k;
            return catalog.createTestCase({
              actor: editor,
              projectId,
              name: `case ${String(i).padStart(3, "0")} ${login(i) ? "Login" : "checkout"}${i === 7 ? " 100%_done" : ""}`,
              tags: ["bulk", ...(smoke(i) ? [i % 2 ? "SMOKE" : "smoke"] : []), ...(i === 1 ? ["rare"] : [])],
              enabled: i % 4 !== 0,
              steps: [httpStep(`/case/${i}`)],
            });
          }),
        );
      }
    });

    const list = (tags: string[] = [], search?: string, includeSteps = false) =>
      catalog.listTestCases({ actor: editor, projectId, tags, search, includeSteps });

    it("cuts at 500, oldest first, and says so", async () => {
      const all = await list();
      expect(all.testCases).to.have.length(500);
      expect(all.truncated).to.equal(true);
      const stored = await h.db.query(
        "select id from catalog.test_cases where project_id = $1 order by created_at, id",
        [projectId],
      );
      expect(all.testCases.map((t) => t.id)).to.deep.equal(stored.rows.slice(0, 500).map((r) => r.id));
      // Disabled test cases are listed too; steps only when asked.
      expect(all.testCases.some((t) => !t.enabled)).to.equal(true);
      expect(all.testCases.every((t) => t.steps.length === 0)).to.equal(true);
      const withSteps = await list(["rare"], undefined, true);
      expect(httpStepOf(withSteps.testCases[0]?.steps[0])?.request?.path).to.equal("/case/1");
      // Empty tags and an empty search are no filter.
      const blank = await list(["", "  "], "");
      expect(blank.testCases).to.have.length(500);
      expect(blank.truncated).to.equal(true);
    });

    it("reads test cases by id in one call, beyond the first 500 too, at most 500 ids", async () => {
      const stored = await h.db.query(
        "select id from catalog.test_cases where project_id = $1 order by created_at, id",
        [projectId],
      );
      const storedIds = stored.rows.map((r) => String(r.id));
      const last = storedIds.at(-1) ?? "";
      expect((await list()).testCases.map((t) => t.id)).not.to.include(last);
      const wanted = [last, storedIds[3] ?? "", "tc_01jd3k0000000000000000000"];
      const byId = await catalog.listTestCases({ actor: editor, projectId, testCaseIds: wanted });
      // Oldest first, like any list; an id that is no test case of the project is left out.
      expect(byId.testCases.map((t) => t.id)).to.deep.equal([storedIds[3], last]);
      expect(byId.truncated).to.equal(false);
      // AND-ed with the other filters.
      const untagged = await catalog.listTestCases({
        actor: editor,
        projectId,
        tags: ["no-such-tag"],
        testCaseIds: wanted,
      });
      expect(untagged.testCases).to.deep.equal([]);
      const tooMany = await violatedFields(
        catalog.listTestCases({ actor: editor, projectId, testCaseIds: storedIds.slice(0, 501) }),
      );
      expect(tooMany.fields).to.deep.equal(["test_case_ids"]);
    });

    it("matches any of the tags, ignoring case", async () => {
      const expected = Array.from({ length: total }, (_, i) => i).filter(smoke).length;
      for (const tags of [["smoke"], ["SMOKE"], ["Smoke", "no-such-tag"]]) {
        const found = await list(tags);
        expect(found.testCases, tags.join()).to.have.length(expected);
        expect(found.truncated).to.equal(false);
        expect(found.testCases.every((t) => t.tags.some((tag) => tag.toLowerCase() === "smoke"))).to.equal(
          true,
        );
      }
      const either = await list(["rare", "smoke"]);
      expect(either.testCases).to.have.length(expected + 1);
      expect((await list(["smok"])).testCases).to.have.length(0);
    });

    it("searches names by case-insensitive substring, AND-ed with tags", async () => {
      const logins = Array.from({ length: total }, (_, i) => i).filter(login);
      const found = await list([], "LOGIN");
      expect(found.testCases).to.have.length(logins.length);
      expect(found.truncated).to.equal(false);
      const both = await list(["smoke"], "login");
      expect(both.testCases).to.have.length(logins.filter(smoke).length);
      // Sorted: the cases were created in parallel batches, so creation order within a batch is not index order.
      expect(both.testCases.map((t) => t.name).sort()).to.deep.equal(
        logins.filter(smoke).map((i) => `case ${String(i).padStart(3, "0")} Login`),
      );
      // The search text is matched as written: % and _ are no wildcards.
      expect((await list([], "%")).testCases.map((t) => t.name)).to.deep.equal([
        "case 007 checkout 100%_done",
      ]);
      expect((await list([], "%_d")).testCases).to.have.length(1);
      expect((await list([], "c_se")).testCases).to.have.length(0);
    });

    it("a run by tags over 500 test cases is refused, never cut", async () => {
      await catalog.createEnvironment({ actor: editor, projectId, name: "prod", baseUrl: "https://e.io" });
      const enabled = Array.from({ length: total }, (_, i) => i).filter((i) => i % 4 !== 0).length;
      const fine = await catalog.resolveRunSelection({
        actor: editor,
        projectId,
        selection: { case: "tags", value: { tags: ["BULK"] } },
      });
      expect(fine.testCases).to.have.length(enabled);
      await Promise.all(
        Array.from({ length: 501 - enabled }, (_, i) =>
          catalog.createTestCase({
            actor: editor,
            projectId,
            name: `more ${i}`,
            tags: ["bulk"],
            steps: [httpStep()],
          }),
        ),
      );
      const error = await rejects(
        catalog.resolveRunSelection({
          actor: editor,
          projectId,
          selection: { case: "tags", value: { tags: ["bulk"] } },
        }),
        Code.InvalidArgument,
      );
      expect(error.rawMessage).to.equal("the tags select 501 test cases; at most 500");
    });
  });

  describe("test plans", () => {
    it("hold distinct test cases of the project in order, lose deleted ones, and are replaced as a whole", async () => {
      const projectId = await project();
      const cases = await Promise.all(
        ["a", "b", "c"].map(
          async (name) =>
            (await catalog.createTestCase({ actor: editor, projectId, name, steps: [httpStep()] })).testCase
              ?.id ?? "",
        ),
      );
      const [a, b, c] = cases as [string, string, string];
      const { testPlan } = await catalog.createTestPlan({
        actor: editor,
        projectId,
        name: "nightly",
        description: "all of it",
        testCaseIds: [c, a, b],
      });
      expect(testPlan).to.include({ name: "nightly", description: "all of it", testCaseCount: 3 });
      expect(testPlan?.testCaseIds).to.deep.equal([c, a, b]);

      const duplicate = await violatedFields(
        catalog.createTestPlan({
          actor: editor,
          projectId,
          name: "dup",
          description: "",
          testCaseIds: [a, b, a],
        }),
      );
      expect(duplicate.fields).to.deep.equal(["test_case_ids[2]"]);
      const tooMany = await violatedFields(
        catalog.createTestPlan({
          actor: editor,
          projectId,
          name: "big",
          description: "",
          testCaseIds: Array.from({ length: 501 }, (_, i) => `tc_${i}`),
        }),
      );
      expect(tooMany.fields[0]).to.equal("test_case_ids");
      const unknown = await rejects(
        catalog.createTestPlan({
          actor: editor,
          projectId,
          name: "u",
          description: "",
          testCaseIds: [a, "tc_nope"],
        }),
        Code.NotFound,
      );
      expect(unknown.rawMessage).to.equal("tc_nope is not a test case of this project");

      await catalog.deleteTestCase({ actor: editor, projectId, testCaseId: a });
      const after = await catalog.getTestPlan({ actor: editor, projectId, testPlanId: testPlan?.id });
      expect(after.testPlan?.testCaseIds).to.deep.equal([c, b]);
      expect(after.testPlan?.testCaseCount).to.equal(2);

      const replaced = await catalog.updateTestPlan({
        actor: editor,
        projectId,
        testPlanId: testPlan?.id,
        testCaseIds: { ids: [b] },
      });
      expect(replaced.testPlan).to.include({ name: "nightly", testCaseCount: 1 });
      const emptied = await catalog.updateTestPlan({
        actor: editor,
        projectId,
        testPlanId: testPlan?.id,
        testCaseIds: { ids: [] },
      });
      expect(emptied.testPlan?.testCaseIds).to.deep.equal([]);
      const listed = await catalog.listTestPlans({ actor: editor, projectId });
      expect(listed.testPlans.map((p) => p.name)).to.deep.equal(["nightly"]);
      await catalog.deleteTestPlan({ actor: editor, projectId, testPlanId: testPlan?.id });
      await rejects(
        catalog.getTestPlan({ actor: editor, projectId, testPlanId: testPlan?.id }),
        Code.NotFound,
      );
      // Its test cases stay.
      expect((await catalog.listTestCases({ actor: editor, projectId })).testCases).to.have.length(2);
    });
  });

  describe("projects", () => {
    it("have names unique in the organization ignoring case", async () => {
      const name = unique("Shop");
      await catalog.createProject({ actor: operator(), organizationId: seed.orgId, name, description: "" });
      await rejects(
        catalog.createProject({
          actor: operator(),
          organizationId: seed.orgId,
          name: name.toUpperCase(),
          description: "",
        }),
        Code.AlreadyExists,
      );
      const other = await seedOrganization(catalog);
      await catalog.createProject({ actor: operator(), organizationId: other.orgId, name, description: "" });
    });

    it("are deleted with their content, and the keys service is to revoke their keys", async () => {
      const projectId = await project();
      const { testCase } = await catalog.createTestCase({
        actor: editor,
        projectId,
        name: "t",
        steps: [httpStep()],
      });
      await catalog.createTestPlan({
        actor: editor,
        projectId,
        name: "p",
        description: "",
        testCaseIds: [testCase?.id ?? ""],
      });
      await catalog.createVariable({ actor: editor, projectId, name: "A", value: "secret-a" });
      await rejects(catalog.deleteProject({ actor: editor, projectId }), Code.PermissionDenied);
      await catalog.deleteProject({ actor: member(seed.members.admin), projectId });
      await rejects(catalog.getProject({ actor: operator(), projectId }), Code.NotFound);
      await rejects(
        catalog.getTestCase({ actor: operator(), projectId, testCaseId: testCase?.id }),
        Code.NotFound,
      );
      const left = await h.db.query(
        `select (select count(*) from catalog.test_cases where project_id = $1)::int
              + (select count(*) from catalog.variables where project_id = $1)::int
              + (select count(*) from catalog.test_plans where project_id = $1)::int as n`,
        [projectId],
      );
      expect(left.rows[0].n).to.equal(0);
      // The keys service and the runs service are told (neither runs here: both stay queued).
      const queued = await h.db.query(
        "select kind from catalog.key_notifications where project_id = $1 order by kind",
        [projectId],
      );
      expect(queued.rows).to.deep.equal([
        { kind: "purge_project_artifacts" },
        { kind: "revoke_project_keys" },
      ]);
    });

    it("list oldest first in pages", async () => {
      const other = await seedOrganization(catalog);
      for (let i = 0; i < 4; i++)
        await catalog.createProject({
          actor: operator(),
          organizationId: other.orgId,
          name: `p${i}`,
          description: "",
        });
      const names: string[] = [];
      let pageToken = "";
      do {
        const page = await catalog.listProjects({
          actor: member(other.members.viewer),
          organizationId: other.orgId,
          pageSize: 2,
          pageToken,
        });
        names.push(...page.projects.map((p) => p.name));
        pageToken = page.nextPageToken;
      } while (pageToken);
      expect(names.slice(1)).to.deep.equal(["p0", "p1", "p2", "p3"]);
    });
  });

  it("GetProject can bring the environments and test plans along", async () => {
    const projectId = await project();
    await catalog.createEnvironment({ actor: editor, projectId, name: "e1", baseUrl: "https://1.io" });
    await catalog.createEnvironment({
      actor: editor,
      projectId,
      name: "e2",
      baseUrl: "https://2.io",
      isDefault: true,
    });
    await catalog.createTestPlan({ actor: editor, projectId, name: "p1", description: "d" });
    const bare = await catalog.getProject({ actor: editor, projectId });
    expect(bare.environments).to.deep.equal([]);
    const full = await catalog.getProject({ actor: editor, projectId, includeContents: true });
    expect(full.environments.map((e) => [e.name, e.isDefault])).to.deep.equal([
      ["e1", false],
      ["e2", true],
    ]);
    expect(full.testPlans.map((p) => [p.name, p.description, p.testCaseCount])).to.deep.equal([
      ["p1", "d", 0],
    ]);
  });
});
