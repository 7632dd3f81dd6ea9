// A pipeline's view of the whole system: every service a real process, a real target app, the
// REST API through the real gateway.

import { once } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createCliContext, createEnvironment, getBalance } from "@testrun/cli";
import { eventually, startServiceProcess } from "@testrun/testing";
import { expect } from "chai";
import { demoCredentials, seedDemo } from "../scripts/demo/seed.js";
import type { System } from "../scripts/system.js";
import { addCases, getCase, newProject, Pipeline, sharedTestSystem, startTestSystem } from "./pipeline.js";

describe("runs through the REST API, executed for real", () => {
  let system: System;
  let projectId: string;
  let pipeline: Pipeline;

  before(async () => {
    // The shared system: the demo seed is a new organization each time it is called.
    system = await sharedTestSystem();
    const demo = await seedDemo(system.env, system.demoTargetUrl);
    projectId = demo.projectId;
    pipeline = new Pipeline(system.gatewayUrl, demo.secret);
  });

  it("runs the Smoke plan, whose login uses secret variables, to PASSED", async () => {
    const started = await pipeline.start({ testPlan: "smoke" });
    expect(started.status).to.equal("RUNNING");
    expect(started.finished).to.equal(false);
    expect(started.tests.map((t) => t.status)).to.deep.equal(["QUEUED", "QUEUED"]);
    const run = await pipeline.finished(started.id);
    expect(run.status).to.equal("PASSED");
    expect(run.passedTests).to.equal(2);
    expect(run.durationMs).to.be.a("number");
    expect(run.url).to.contain(`/runs/${run.id}`);
  });

  it("fails a run whose expectation fails, with a precise summary", async () => {
    const started = await pipeline.start({ tags: ["regression"] });
    const run = await pipeline.finished(started.id);
    expect(run.status).to.equal("FAILED");
    const failing = run.tests.find((t) => t.name === "a wrong password is forbidden");
    expect(failing?.status).to.equal("FAILED");
    expect(failing?.summary).to.equal('step 1 "log in with a wrong password": expected status 403, got 401');
  });

  it("skips a run whose environment does not answer, giving its credits back", async () => {
    const balance = () => getBalance(createCliContext(system.env), { projectId });
    const before = await balance();
    const started = await pipeline.start({ testPlan: "Smoke", environment: "unreachable" });
    const run = await pipeline.finished(started.id);
    expect(run.status).to.equal("SKIPPED");
    expect(run.skipReason).to.equal("environment_unreachable");
    expect(run.tests.map((t) => t.status)).to.deep.equal(["SKIPPED", "SKIPPED"]);
    // The refund is sent to billing right after the run's final state commits: wait for it.
    await eventually(async () => ((await balance()) === before ? true : undefined), "the refund");
  });

  it("lists runs newest first with the list fields", async () => {
    const { status, body } = await pipeline.call("GET", "/v1/runs?limit=2");
    expect(status).to.equal(200);
    const runs = body.runs as Record<string, string>[];
    expect(runs).to.have.length(2);
    expect(runs[0]).to.include.keys("environmentId", "testPlanId", "createdAt");
    expect(runs[0]).not.to.have.property("tests");
    expect(Date.parse(String(runs[0]?.createdAt))).to.be.at.least(Date.parse(String(runs[1]?.createdAt)));
  });

  it("answers 404 for an unknown run and an unknown plan", async () => {
    expect((await pipeline.call("GET", "/v1/runs/run_01m80000000000000000000000")).status).to.equal(404);
    const unknownPlan = await pipeline.call("POST", "/v1/runs", { testPlan: "no such plan" });
    expect(unknownPlan.status).to.equal(404);
  });

  it("never shows a variable value in a response or a log line", () => {
    const logs = [...system.processes.values()].flatMap((p) => p.output());
    for (const text of [...pipeline.responses, ...logs])
      expect(text).not.to.contain(demoCredentials.password);
  });
});

describe("an executor killed mid-test", () => {
  let system: System;
  let pipeline: Pipeline;
  const held = new Set<ServerResponse>();
  let release = false;
  // The environment under test: /slow is answered only once the test releases it, so the step can
  // be known to be in flight; everything else (the executor's reachability check) answers at once.
  const slowArrived = Promise.withResolvers<void>();
  const target = createServer((req, res) => {
    if (req.url !== "/slow" || release) {
      res.end("ok");
      return;
    }
    held.add(res);
    slowArrived.resolve();
  });

  before(async () => {
    target.listen(0, "127.0.0.1");
    await once(target, "listening");
    system = await startTestSystem({ extraEnv: { LEASE_MS: "1500", RECONCILE_INTERVAL_MS: "500" } });
    const project = await newProject(system, "held", { credits: 10 });
    pipeline = project.pipeline;
    const { port } = target.address() as AddressInfo;
    await createEnvironment(createCliContext(system.env), {
      projectId: project.projectId,
      name: "held",
      baseUrl: `http://127.0.0.1:${port}`,
    });
    await addCases(system, project.projectId, getCase("slow page", "held", "/slow"));
  });
  after(async () => {
    release = true;
    for (const res of held) res.end("ok");
    target.close();
    await system?.stop();
  });

  it("has its test taken over by another executor once the lease lapses, and the run finishes", async () => {
    const started = await pipeline.start({ tags: ["held"], environment: "held" });
    await slowArrived.promise;

    const first = system.processes.get("executor");
    await first?.stop("SIGKILL");
    release = true;
    const second = await startServiceProcess("executor", { ...system.executorEnv, PORT: "0" });
    try {
      const run = await pipeline.finished(started.id);
      expect(run.status).to.equal("PASSED");
    } finally {
      await second.stop("SIGTERM");
    }
  });
});
