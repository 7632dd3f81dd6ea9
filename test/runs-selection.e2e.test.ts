// Starting runs as a pipeline does: every rule of docs/rest-api.md ("Starting a run") on what a
// run executes, and every refusal, through the real gateway with every service a real process.
import { createCliContext, createEnvironment, createTestPlan, getBalance } from "@testrun/cli";
import { expect } from "chai";
import type { System } from "../scripts/system.js";
import { type Answer, addCases, getCase, newProject, type Pipeline, sharedTestSystem } from "./pipeline.js";

interface ListedRun {
  id: string;
  name: string;
  environmentId: string;
  testPlanId: string | null;
}

/** One test case of one GET /health step, with its tags and whether it is enabled. */
const healthCase = (name: string, tags: string[], enabled = true) =>
  `- name: ${name}\n  tags: [${tags.join(", ")}]\n  enabled: ${enabled}\n  steps:\n    - name: get health\n      http: { method: GET, path: /health }\n      expect: { status: 200 }\n`;

describe("starting runs: what runs, and every refusal, through the real gateway", () => {
  let system: System;
  let pipeline: Pipeline;
  let projectId: string;
  // Project "selection": environments, cases and plans the rules are tried on.
  const env = { demo: "", staging: "", twins: [] as string[] };
  const cases = { one: "", two: "", disabled: "", nightly: "" };
  const plans = { release: "", onlyDisabled: "", nightly: [] as string[] };
  // Project "elsewhere": its ids must mean nothing to the key of "selection".
  let elsewhere: { pipeline: Pipeline; environment: string; testCase: string; plan: string; run: string };

  const ctx = () => createCliContext(system.env);
  const environmentIdOf = async (name: string, of: Pipeline) => {
    const { body } = await of.call("GET", "/v1/environments");
    const found = (body.environments as { id: string; name: string }[]).find((e) => e.name === name);
    return found?.id ?? "";
  };
  /** The list form of a run (it alone carries environmentId and testPlanId). */
  const listed = async (id: string, of = pipeline) => {
    const { body } = await of.call("GET", "/v1/runs?limit=100");
    const run = (body.runs as ListedRun[]).find((r) => r.id === id);
    expect(run, `run ${id} in the list`).to.not.equal(undefined);
    return run as ListedRun;
  };
  const runCount = async (of = pipeline) =>
    ((await of.call("GET", "/v1/runs?limit=100")).body.runs as unknown[]).length;
  const expectRefusal = (answer: Answer, status: number, code: string, says?: string) => {
    expect(answer.status, JSON.stringify(answer.body)).to.equal(status);
    expect(answer.body.code).to.equal(code);
    expect(answer.body.error).to.be.a("string");
    if (says) expect(answer.body.error).to.contain(says);
  };
  const refuseStart = async (body: unknown, status: number, code: string, says?: string) => {
    const answer = await pipeline.call("POST", "/v1/runs", body);
    expectRefusal(answer, status, code, says);
    return answer;
  };

  before(async () => {
    system = await sharedTestSystem();
    const selection = await newProject(system, "selection", { credits: 1000, defaultEnvironment: false });
    ({ pipeline, projectId } = selection);
    // "demo" is first and not the default; "Staging", created later, is.
    await createEnvironment(ctx(), {
      projectId,
      name: "Staging",
      baseUrl: system.demoTargetUrl,
      isDefault: true,
    });
    for (const name of ["Twin", "twin"]) {
      await createEnvironment(ctx(), { projectId, name, baseUrl: system.demoTargetUrl });
    }
    env.demo = await environmentIdOf("demo", pipeline);
    env.staging = await environmentIdOf("Staging", pipeline);
    const { body } = await pipeline.call("GET", "/v1/environments");
    env.twins = (body.environments as { id: string; name: string }[])
      .filter((e) => e.name.toLowerCase() === "twin")
      .map((e) => e.id);

    const created = await addCases(
      system,
      projectId,
      [
        healthCase("health one", ["smoke"]),
        healthCase("health two", ["smoke", "nightly"]),
        healthCase("health disabled", ["smoke"], false),
        healthCase("nightly only", ["Nightly"]),
      ].join(""),
    );
    [cases.one = "", cases.two = "", cases.disabled = "", cases.nightly = ""] = created.map((c) => c.id);
    const plan = async (name: string, testCases: string[]) =>
      (await createTestPlan(ctx(), { projectId, name, testCases })).id;
    plans.release = await plan("Release", [cases.one, cases.disabled]);
    plans.onlyDisabled = await plan("Only disabled", [cases.disabled]);
    plans.nightly = [await plan("Nightly", [cases.nightly]), await plan("nightly", [cases.two])];

    const other = await newProject(system, "elsewhere", { credits: 10, defaultEnvironment: false });
    const [otherCase] = await addCases(system, other.projectId, getCase("other health", "smoke", "/health"));
    const otherPlan = await createTestPlan(ctx(), {
      projectId: other.projectId,
      name: "Release",
      testCases: [otherCase?.id ?? ""],
    });
    await createEnvironment(ctx(), {
      projectId: other.projectId,
      name: "later",
      baseUrl: system.demoTargetUrl,
    });
    const otherRun = await other.pipeline.start({ testPlan: "Release" });
    elsewhere = {
      pipeline: other.pipeline,
      environment: await environmentIdOf("demo", other.pipeline),
      testCase: otherCase?.id ?? "",
      plan: otherPlan.id,
      run: otherRun.id,
    };
  });
  describe("the environment", () => {
    it("is the project's default when none is named", async () => {
      const run = await pipeline.start({ testPlan: "Release" });
      expect((await listed(run.id)).environmentId).to.equal(env.staging);
    });

    it("is the first environment when none is named and the project has no default", async () => {
      const { pipeline: other } = elsewhere;
      const run = await other.start({ testPlan: "Release" });
      expect((await listed(run.id, other)).environmentId).to.equal(elsewhere.environment);
    });

    it("is taken by id, or by name ignoring letter case", async () => {
      const byId = await pipeline.start({ testPlan: "Release", environment: env.demo });
      expect((await listed(byId.id)).environmentId).to.equal(env.demo);
      const byName = await pipeline.start({ testPlan: "Release", environment: "STAGING" });
      expect((await listed(byName.id)).environmentId).to.equal(env.staging);
      const demoByName = await pipeline.start({ testPlan: "Release", environment: "Demo" });
      expect((await listed(demoByName.id)).environmentId).to.equal(env.demo);
    });

    it("named by several environments is refused with 409 and their ids; one of the ids works", async () => {
      const answer = await refuseStart({ testPlan: "Release", environment: "TWIN" }, 409, "ambiguous_name");
      expect(answer.body.candidates).to.have.members(env.twins);
      const [chosen = ""] = env.twins;
      const run = await pipeline.start({ testPlan: "Release", environment: chosen });
      expect((await listed(run.id)).environmentId).to.equal(chosen);
    });
  });

  describe("what runs", () => {
    it("a plan, by name ignoring case or by id: its enabled test cases, named after the plan", async () => {
      for (const testPlan of ["release", plans.release]) {
        const run = await pipeline.start({ testPlan });
        expect(run.name).to.equal("Release");
        expect(run.tests.map((t) => t.testCaseId)).to.deep.equal([cases.one]);
        expect((await listed(run.id)).testPlanId).to.equal(plans.release);
      }
    });

    it("a plan name matching several plans is refused with 409 and their ids; one of the ids works", async () => {
      const answer = await refuseStart({ testPlan: "NIGHTLY" }, 409, "ambiguous_name");
      expect(answer.body.candidates).to.have.members(plans.nightly);
      const run = await pipeline.start({ testPlan: plans.nightly[1] });
      expect(run.tests.map((t) => t.testCaseId)).to.deep.equal([cases.two]);
    });

    it("tags: every enabled test case having any of them, ignoring case", async () => {
      const run = await pipeline.start({ tags: ["SMOKE", "nightly"] });
      expect(run.tests.map((t) => t.testCaseId)).to.have.members([cases.one, cases.two, cases.nightly]);
      expect(run.name).to.equal("tags: SMOKE, nightly");
      expect((await listed(run.id)).testPlanId).to.equal(null);
    });

    it("testCaseIds: exactly the cases named, a disabled one too, duplicates once", async () => {
      const run = await pipeline.start({ testCaseIds: [cases.disabled, cases.one, cases.disabled] });
      expect(run.tests.map((t) => t.testCaseId)).to.deep.equal([cases.disabled, cases.one]);
      expect(run.totalTests).to.equal(2);
      expect(run.name).to.equal("2 test cases");
    });

    it("a given name is kept; every new run is RUNNING, unfinished, its tests QUEUED", async () => {
      const run = await pipeline.start({ tags: ["nightly"], name: "nightly build 812" });
      expect(run).to.include({ name: "nightly build 812", status: "RUNNING", finished: false });
      expect(run.startedAt).to.be.a("string");
      expect(run.finishedAt).to.equal(null);
      expect(run.tests.map((t) => t.status)).to.deep.equal(["QUEUED", "QUEUED"]);
    });

    it("retries of 0 to 3 are taken with any selection (null as not given)", async () => {
      for (const [body, retries] of [
        [{ testPlan: "Release" }, 2],
        [{ tags: ["nightly"] }, 0],
        [{ testCaseIds: [cases.one] }, 3],
        [{ testCaseIds: [cases.one] }, null],
      ] as const) {
        const run = await pipeline.start({ ...body, retries });
        expect(run.status, JSON.stringify(retries)).to.equal("RUNNING");
      }
    });

    it("is started anew by a repeated request: the operation is not idempotent", async () => {
      const body = { testCaseIds: [cases.one] };
      const first = await pipeline.start(body);
      const second = await pipeline.start(body);
      expect(second.id).to.not.equal(first.id);
    });
  });

  describe("refusals leave nothing behind", () => {
    let balanceBefore: bigint;
    let runsBefore: number;
    beforeEach(async () => {
      balanceBefore = await getBalance(ctx(), { projectId });
      runsBefore = await runCount();
    });
    // Every refusal below: no credit spent, no run stored.
    afterEach(async () => {
      expect(await getBalance(ctx(), { projectId }), "the balance").to.equal(balanceBefore);
      expect(await runCount(), "the runs stored").to.equal(runsBefore);
    });

    it("400 to none or several of testPlan, testCaseIds, tags", async () => {
      await refuseStart({}, 400, "invalid_request");
      await refuseStart({ name: "only a name" }, 400, "invalid_request");
      await refuseStart({ testPlan: "Release", tags: ["smoke"] }, 400, "invalid_request", "testPlan, tags");
      await refuseStart(
        { testPlan: "Release", testCaseIds: [cases.one], tags: ["smoke"] },
        400,
        "invalid_request",
      );
    });

    it("400 to nothing to run: empty lists, tags no enabled case has, a plan of disabled cases", async () => {
      await refuseStart({ tags: [] }, 400, "invalid_request", "nothing to run");
      await refuseStart({ testCaseIds: [] }, 400, "invalid_request", "nothing to run");
      await refuseStart({ tags: ["no-such-tag"] }, 400, "invalid_request", "nothing to run");
      await refuseStart({ testPlan: "Only disabled" }, 400, "invalid_request", "nothing to run");
    });

    it("400 naming an unknown field, a name over 200 characters, and wrong types", async () => {
      await refuseStart({ testplan: "Release" }, 400, "invalid_request", '"testplan"');
      await refuseStart({ testPlan: "Release", name: "x".repeat(201) }, 400, "invalid_request", "200");
      await refuseStart({ testPlan: ["Release"] }, 400, "invalid_request", "testPlan");
      await refuseStart({ tags: "smoke" }, 400, "invalid_request", "tags");
      await refuseStart({ testPlan: "Release", environment: 7 }, 400, "invalid_request", "environment");
    });

    it("400 to retries that are not a whole number from 0 to 3", async () => {
      for (const retries of [4, -1, 1.5, "x", "2", true]) {
        await refuseStart(
          { testPlan: "Release", retries },
          400,
          "invalid_request",
          "retries must be a whole number from 0 to 3",
        );
      }
    });

    it("400 to text with a NUL character anywhere, which the services could not store; other problems first", async () => {
      const nul = "text in the request must not contain NUL characters";
      await refuseStart({ testPlan: "Release", name: "a\u0000b" }, 400, "invalid_request", nul);
      await refuseStart({ testPlan: "Rel\u0000ease" }, 400, "invalid_request", nul);
      await refuseStart({ tags: ["smoke", "\u0000"] }, 400, "invalid_request", nul);
      await refuseStart({ testPlan: "Release", environment: "\u0000" }, 400, "invalid_request", nul);
      await refuseStart({ tags: [], name: "\u0000" }, 400, "invalid_request", "nothing to run");
      const search = await pipeline.call("GET", "/v1/test-cases?search=%00");
      expectRefusal(search, 400, "invalid_request", nul);
    });

    it("404 to a run id that cannot be a run, NUL included", async () => {
      for (const id of [
        "nothing",
        "run_%00",
        "run_01M80000000000000000000000",
        `${"run_01m8".padEnd(31, "0")}`,
      ]) {
        const answer = await pipeline.call("GET", `/v1/runs/${id}`);
        expectRefusal(answer, 404, "not_found", "no such run in this project");
      }
    });

    it("400 to more than 500 test cases, never a silent cut", async () => {
      const ids = Array.from({ length: 501 }, (_, i) => `tc_${i}`);
      await refuseStart({ testCaseIds: ids }, 400, "invalid_request", "500");
    });

    it("404 to an environment, plan or test case the project does not have", async () => {
      await refuseStart({ testPlan: "Release", environment: "production" }, 404, "not_found", "production");
      await refuseStart({ testPlan: "Weekly" }, 404, "not_found", "Weekly");
      await refuseStart({ testCaseIds: [cases.one, "tc_01m80000000000000000000000"] }, 404, "not_found");
    });

    it("404 to another project's environment, plan, test case and run, given by id", async () => {
      await refuseStart({ testPlan: "Release", environment: elsewhere.environment }, 404, "not_found");
      await refuseStart({ testPlan: elsewhere.plan }, 404, "not_found");
      await refuseStart({ testCaseIds: [elsewhere.testCase] }, 404, "not_found");
      expectRefusal(await pipeline.call("GET", `/v1/runs/${elsewhere.run}`), 404, "not_found");
    });
  });

  describe("credits", () => {
    it("402 with required and available when the balance is short, then nothing is charged or stored", async () => {
      const poor = await newProject(system, "two credits", { credits: 2 });
      const [a, b] = await addCases(
        system,
        poor.projectId,
        [getCase("a", "all", "/health"), getCase("b", "all", "/health"), getCase("c", "all", "/health")].join(
          "",
        ),
      );
      const answer = await poor.pipeline.call("POST", "/v1/runs", { tags: ["all"] });
      expectRefusal(answer, 402, "insufficient_credits");
      expect(answer.body).to.include({ required: 3, available: 2 });
      expect(await getBalance(ctx(), { projectId: poor.projectId })).to.equal(2n);
      expect(await runCount(poor.pipeline)).to.equal(0);

      // A run the balance covers still starts, and spends it all.
      const run = await poor.pipeline.start({ testCaseIds: [a?.id, b?.id] });
      expect(run.totalTests).to.equal(2);
      expect(await getBalance(ctx(), { projectId: poor.projectId })).to.equal(0n);
    });
  });
});
