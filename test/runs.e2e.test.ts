// A pipeline's view of the whole system: every service a real process, a real target app, the
// REST API through the real gateway.

import { once } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createCliContext,
  createEnvironment,
  createTestCases,
  getBalance,
  parseTestCaseFile,
} from "@testrun/cli";
import { createTestDatabase, eventually, startServiceProcess } from "@testrun/kit/testing";
import { expect } from "chai";
import { demoCredentials, seedDemo } from "../scripts/demo/seed.js";
import { type System, startSystem } from "../scripts/system.js";

interface RunBody {
  id: string;
  status: string;
  finished: boolean;
  totalTests: number;
  passedTests: number;
  failedTests: number;
  durationMs: number | null;
  skipReason: string | null;
  url: string;
  tests: { name: string; status: string; summary: string }[];
}

describe("runs through the REST API, executed for real", () => {
  let system: System;
  let key: string;
  let projectId: string;
  const responses: string[] = [];

  before(async () => {
    system = await startSystem({
      databaseUrl: await createTestDatabase(String(process.env.DATABASE_URL)),
      redisUrl: String(process.env.REDIS_URL),
      ports: "free",
      // Polling until a run finishes takes more than the production 60 requests a minute.
      extraEnv: { RATE_LIMIT_PER_MINUTE: "100000" },
    });
    ({ secret: key, projectId } = await seedDemo(system.env, system.demoTargetUrl));
  });
  after(async () => {
    await system?.stop();
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${system.gatewayUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined && { "content-type": "application/json" }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    responses.push(text);
    return { status: res.status, body: JSON.parse(text) };
  };

  /** Polls the run as a pipeline does, until it can no longer change. */
  // The contract has no push: a client polls.
  const finished = (id: string) =>
    eventually(
      async () => {
        const { body } = await call("GET", `/v1/runs/${id}`);
        return body.finished ? (body as RunBody) : undefined;
      },
      `run ${id} to finish`,
      30_000,
    );

  it("runs the Smoke plan, whose login uses secret variables, to PASSED", async () => {
    const started = await call("POST", "/v1/runs", { testPlan: "smoke" });
    expect(started.status).to.equal(201);
    expect(started.body.status).to.equal("RUNNING");
    expect(started.body.finished).to.equal(false);
    expect(started.body.tests.map((t: { status: string }) => t.status)).to.deep.equal(["QUEUED", "QUEUED"]);
    const run = await finished(started.body.id);
    expect(run.status).to.equal("PASSED");
    expect(run.passedTests).to.equal(2);
    expect(run.durationMs).to.be.a("number");
    expect(run.url).to.contain(`/runs/${run.id}`);
  });

  it("fails a run whose expectation fails, with a precise summary", async () => {
    const started = await call("POST", "/v1/runs", { tags: ["regression"] });
    const run = await finished(started.body.id);
    expect(run.status).to.equal("FAILED");
    const failing = run.tests.find((t) => t.name === "a wrong password is forbidden");
    expect(failing?.status).to.equal("FAILED");
    expect(failing?.summary).to.equal('step 1 "log in with a wrong password": expected status 403, got 401');
  });

  it("skips a run whose environment does not answer, giving its credits back", async () => {
    const balance = () => getBalance(createCliContext(system.env), { projectId });
    const before = await balance();
    const started = await call("POST", "/v1/runs", { testPlan: "Smoke", environment: "unreachable" });
    const run = await finished(started.body.id);
    expect(run.status).to.equal("SKIPPED");
    expect(run.skipReason).to.equal("environment_unreachable");
    expect(run.tests.map((t) => t.status)).to.deep.equal(["SKIPPED", "SKIPPED"]);
    // The refund is sent to billing right after the run's final state commits: wait for it.
    await eventually(async () => ((await balance()) === before ? true : undefined), "the refund");
  });

  it("lists runs newest first with the list fields", async () => {
    const { status, body } = await call("GET", "/v1/runs?limit=2");
    expect(status).to.equal(200);
    expect(body.runs).to.have.length(2);
    expect(body.runs[0]).to.include.keys("environmentId", "testPlanId", "createdAt");
    expect(body.runs[0]).not.to.have.property("tests");
    expect(Date.parse(body.runs[0].createdAt)).to.be.at.least(Date.parse(body.runs[1].createdAt));
  });

  it("answers 404 for an unknown run and an unknown plan", async () => {
    expect((await call("GET", "/v1/runs/run_01m80000000000000000000000")).status).to.equal(404);
    const unknownPlan = await call("POST", "/v1/runs", { testPlan: "no such plan" });
    expect(unknownPlan.status).to.equal(404);
  });

  it("never shows a variable value in a response or a log line", () => {
    const logs = [...system.processes.values()].flatMap((p) => p.output());
    for (const text of [...responses, ...logs]) expect(text).not.to.contain(demoCredentials.password);
  });
});

describe("an executor killed mid-test", () => {
  let system: System;
  let key: string;
  let projectId: string;
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
    system = await startSystem({
      databaseUrl: await createTestDatabase(String(process.env.DATABASE_URL)),
      redisUrl: String(process.env.REDIS_URL),
      ports: "free",
      extraEnv: { RATE_LIMIT_PER_MINUTE: "100000", LEASE_MS: "1500", RECONCILE_INTERVAL_MS: "500" },
    });
    ({ secret: key, projectId } = await seedDemo(system.env, system.demoTargetUrl));
    const ctx = createCliContext(system.env);
    const { port } = target.address() as AddressInfo;
    await createEnvironment(ctx, { projectId, name: "held", baseUrl: `http://127.0.0.1:${port}` });
    const yaml =
      "- name: slow page\n  tags: [held]\n  steps:\n    - name: get it\n      http: { method: GET, path: /slow }\n      expect: { status: 200 }\n";
    await createTestCases(ctx, { projectId, testCases: parseTestCaseFile(yaml, "held.yaml") });
  });
  after(async () => {
    release = true;
    for (const res of held) res.end("ok");
    target.close();
    await system?.stop();
  });

  it("has its test taken over by another executor once the lease lapses, and the run finishes", async () => {
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const started = await fetch(`${system.gatewayUrl}/v1/runs`, {
      method: "POST",
      headers,
      body: JSON.stringify({ tags: ["held"], environment: "held" }),
    }).then((res) => res.json() as Promise<{ id: string }>);
    await slowArrived.promise;

    const first = system.processes.get("executor");
    await first?.stop("SIGKILL");
    release = true;
    const second = await startServiceProcess("executor", { ...system.executorEnv, PORT: "0" });
    try {
      // Polling, as a pipeline does: the run has no push.
      const run = await eventually(
        async () => {
          const res = await fetch(`${system.gatewayUrl}/v1/runs/${started.id}`, { headers });
          const body = (await res.json()) as { finished: boolean; status: string };
          return body.finished ? body : undefined;
        },
        "the run to finish",
        30_000,
      );
      expect(run.status).to.equal("PASSED");
    } finally {
      await second.stop("SIGTERM");
    }
  });
});
