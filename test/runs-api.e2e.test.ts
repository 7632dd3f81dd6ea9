// The REST additions for pipelines (docs/rest-api.md): long-poll, cancel, rerun and
// Idempotency-Key, through the real gateway with every service a real process. The environment
// under test is a HeldTarget: a run stays RUNNING exactly until the test releases its request.
import { createCliContext, createEnvironment, createKey, getBalance } from "@testrun/cli";
import { eventually, type GatewayProcess } from "@testrun/testing";
import { expect } from "chai";
import { Redis } from "ioredis";
import type { System } from "../scripts/system.js";
import { HeldTarget } from "./held-target.js";
import {
  type Answer,
  addCases,
  gatewayOnSharedSystem,
  getCase,
  newProject,
  Pipeline,
  type RunBody,
  sharedSystemRedisUrl,
} from "./pipeline.js";

const waitsPerKey = 2;

describe("pipelines' REST additions: long-poll, cancel, rerun, Idempotency-Key", function () {
  this.timeout(60_000);
  let system: System;
  /** The gateway of this suite, with WAITS_PER_KEY of its own, before the shared system. */
  let gateway: GatewayProcess;
  let target: HeldTarget;
  let redis: Redis;
  let projectId: string;
  let pipeline: Pipeline;
  let keyId: string;
  /** The project's owner, whom its keys act for. */
  let ownerId: string;

  const ctx = () => createCliContext(system.env);
  const balance = () => getBalance(ctx(), { projectId });
  const runCount = async () =>
    ((await pipeline.call("GET", "/v1/runs?limit=100")).body.runs as unknown[]).length;
  const expectError = (answer: Answer, status: number, code: string, says?: string) => {
    expect(answer.status, JSON.stringify(answer.body)).to.equal(status);
    expect(answer.body.code).to.equal(code);
    if (says) expect(answer.body.error).to.contain(says);
  };
  /** Waits the gateway counts for the key (waits.ts keeps them in Redis). */
  const waitsHeld = () => redis.zcard(`testrun:gateway:waits:${keyId}`);
  const start = (tag: string) => pipeline.start({ tags: [tag], environment: "held" });

  before(async () => {
    target = await HeldTarget.start();
    ({ system, gateway } = await gatewayOnSharedSystem({ WAITS_PER_KEY: String(waitsPerKey) }));
    redis = new Redis(sharedSystemRedisUrl());
    const project = await newProject(system, "pipelines api", { credits: 1000 });
    projectId = project.projectId;
    ownerId = project.ownerId;
    await createEnvironment(ctx(), { projectId, name: "held", baseUrl: target.url });
    await addCases(
      system,
      projectId,
      [
        getCase("held page", "held", "/held"),
        getCase("never page", "never", "/never"),
        getCase("ok page", "mixed", "/ok"),
        getCase("failing page", "mixed", "/fail"),
        getCase("waited page", "waited", "/waited"),
        getCase("cancelled page", "cancel", "/cancel-me"),
        getCase("other cancelled page", "cancel", "/cancel-too"),
      ].join(""),
    );
    const created = await createKey(ctx(), { projectId, name: "waits", creatorMemberId: project.ownerId });
    keyId = created.key?.id ?? "";
    pipeline = new Pipeline(gateway.http, created.secret);
  });
  after(async () => {
    redis?.disconnect();
    await target?.stop();
    await gateway?.stop();
  });

  describe("GET /v1/runs/{id}?wait=S", () => {
    it("answers once the run finishes, not before, with finished true", async function () {
      // Well under the 30 s asked for: an answer only at the end of the wait would fail the test.
      this.timeout(15_000);
      const release = target.hold("/held");
      const started = await start("held");
      await target.arrived("/held");
      let answered = false;
      const waited = pipeline.call("GET", `/v1/runs/${started.id}?wait=30`).then((answer) => {
        answered = true;
        return answer;
      });
      await eventually(async () => ((await waitsHeld()) === 1 ? true : undefined), "the wait to begin");
      const meanwhile = await pipeline.getRun(started.id);
      expect(meanwhile.finished).to.equal(false);
      expect(answered, "answered before the run finished").to.equal(false);
      release();
      const answer = await waited;
      expect(answer.status).to.equal(200);
      const run = answer.body as unknown as RunBody;
      expect(run.finished).to.equal(true);
      expect(run.status).to.equal("PASSED");
      expect(run.tests.map((t) => t.status)).to.deep.equal(["PASSED"]);
      expect(await waitsHeld(), "the slot is freed").to.equal(0);
    });

    it("answers at once for a finished run", async () => {
      const started = await start("waited");
      const finished = await pipeline.finished(started.id);
      const answer = await pipeline.call("GET", `/v1/runs/${started.id}?wait=30`);
      expect(answer.body).to.deep.equal(finished);
    });

    it("answers with the unfinished run after S seconds when it does not finish", async () => {
      const release = target.hold("/never");
      try {
        const started = await start("never");
        const answer = await pipeline.call("GET", `/v1/runs/${started.id}?wait=1`);
        expect(answer.status).to.equal(200);
        expect(answer.body).to.include({ id: started.id, status: "RUNNING", finished: false });
      } finally {
        release();
      }
    });

    it(`lets a key hold ${waitsPerKey} waits at once: one more gets 429 with Retry-After; another key is not affected`, async () => {
      const release = target.hold("/held");
      const started = await start("held");
      const waits = Array.from({ length: waitsPerKey }, () =>
        pipeline.call("GET", `/v1/runs/${started.id}?wait=30`),
      );
      await eventually(
        async () => ((await waitsHeld()) === waitsPerKey ? true : undefined),
        "the waits to begin",
      );
      const refused = await pipeline.call("GET", `/v1/runs/${started.id}?wait=30`);
      expectError(refused, 429, "rate_limited", "waits");
      expect(Number(refused.headers.get("retry-after"))).to.be.at.least(1);
      const other = (await createKey(ctx(), { projectId, name: "other", creatorMemberId: ownerId })).secret;
      const otherWait = new Pipeline(gateway.http, other).call("GET", `/v1/runs/${started.id}?wait=1`);
      expect((await otherWait).status).to.equal(200);
      release();
      for (const answer of await Promise.all(waits)) expect(answer.body.finished).to.equal(true);
    });

    it("refuses a wait outside 1 to 30 seconds with 400", async () => {
      const started = await start("waited");
      for (const wait of ["0", "31", "1.5", "abc", ""]) {
        const answer = await pipeline.call("GET", `/v1/runs/${started.id}?wait=${wait}`);
        expectError(answer, 400, "invalid_request", "wait must be a whole number of seconds from 1 to 30");
      }
      expectError(
        await pipeline.call("GET", "/v1/runs/run_01m80000000000000000000000?wait=5"),
        404,
        "not_found",
      );
    });
  });

  describe("POST /v1/runs/{id}/cancel", () => {
    it("stops a run: unexecuted tests skipped and refunded, SKIPPED cancelled; again gives 409 run_finished", async () => {
      const releaseFirst = target.hold("/cancel-me");
      const releaseSecond = target.hold("/cancel-too");
      try {
        const before = await balance();
        const started = await start("cancel");
        await Promise.race([target.arrived("/cancel-me"), target.arrived("/cancel-too")]);
        const answer = await pipeline.call("POST", `/v1/runs/${started.id}/cancel`);
        expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
        const run = answer.body as unknown as RunBody;
        expect(run).to.include({
          id: started.id,
          status: "SKIPPED",
          skipReason: "cancelled",
          finished: true,
        });
        expect(run.tests.map((t) => t.status)).to.deep.equal(["SKIPPED", "SKIPPED"]);
        // A test an executor had taken used its credit; those still QUEUED are given back.
        const queued = run.tests.filter((t) => t.summary === "cancelled before it ran").length;
        expect(queued + run.tests.filter((t) => t.summary === "cancelled while running").length).to.equal(2);
        await eventually(
          async () => ((await balance()) === before - 2n + BigInt(queued) ? true : undefined),
          "the refund",
        );
        const again = await pipeline.call("POST", `/v1/runs/${started.id}/cancel`);
        expectError(again, 409, "run_finished", "already finished (SKIPPED)");
      } finally {
        releaseFirst();
        releaseSecond();
      }
    });

    it("gives 409 for a run that finished on its own, 404 for an unknown run, 400 for a body", async () => {
      const started = await start("waited");
      await pipeline.finished(started.id);
      expectError(
        await pipeline.call("POST", `/v1/runs/${started.id}/cancel`, {}),
        409,
        "run_finished",
        "PASSED",
      );
      expectError(
        await pipeline.call("POST", "/v1/runs/run_01m80000000000000000000000/cancel"),
        404,
        "not_found",
      );
      const body = await pipeline.call("POST", `/v1/runs/${started.id}/cancel`, { reason: "x" });
      expectError(body, 400, "invalid_request", 'unknown field "reason"');
    });
  });

  describe("POST /v1/runs/{id}/rerun", () => {
    let mixed: RunBody;

    before(async () => {
      const fail = target.hold("/fail", 500);
      const started = await start("mixed");
      await target.arrived("/fail");
      fail();
      mixed = await pipeline.finished(started.id);
      expect(mixed.status).to.equal("FAILED");
    });

    it("reruns the failed tests on the same environment (failedOnly: true)", async () => {
      const failed = mixed.tests.find((t) => t.status === "FAILED");
      const answer = await pipeline.call("POST", `/v1/runs/${mixed.id}/rerun`, { failedOnly: true });
      expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
      const run = answer.body as unknown as RunBody;
      expect(run.id).to.not.equal(mixed.id);
      expect(run.name).to.equal(`${mixed.name} (rerun of failed)`);
      expect(run.tests.map((t) => t.testCaseId)).to.deep.equal([failed?.testCaseId]);
      const listed = (await pipeline.call("GET", "/v1/runs?limit=100")).body.runs as {
        id: string;
        environmentId: string;
      }[];
      const environmentOf = (id: string) => listed.find((r) => r.id === id)?.environmentId;
      expect(environmentOf(run.id)).to.equal(environmentOf(mixed.id));
      expect((await pipeline.finished(run.id)).status).to.equal("PASSED");
    });

    it("reruns every test by default, and with failedOnly: false", async () => {
      for (const body of [undefined, {}, { failedOnly: false }]) {
        const answer = await pipeline.call("POST", `/v1/runs/${mixed.id}/rerun`, body);
        expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
        const run = answer.body as unknown as RunBody;
        expect(run.name).to.equal(`${mixed.name} (rerun)`);
        expect(run.tests.map((t) => t.testCaseId)).to.deep.equal(mixed.tests.map((t) => t.testCaseId));
        await pipeline.finished(run.id);
      }
    });

    it("gives 400 when nothing is to rerun, 404 for an unknown run, 400 for a bad body", async () => {
      const passed = await pipeline.finished((await start("waited")).id);
      const nothing = await pipeline.call("POST", `/v1/runs/${passed.id}/rerun`, { failedOnly: true });
      expectError(nothing, 400, "invalid_request", "nothing to rerun");
      expectError(
        await pipeline.call("POST", "/v1/runs/run_01m80000000000000000000000/rerun", {}),
        404,
        "not_found",
      );
      expectError(
        await pipeline.call("POST", `/v1/runs/${passed.id}/rerun`, { failedOnly: "yes" }),
        400,
        "invalid_request",
        "failedOnly",
      );
      expectError(
        await pipeline.call("POST", `/v1/runs/${passed.id}/rerun`, { failed: true }),
        400,
        "invalid_request",
        '"failed"',
      );
    });
  });

  describe("Idempotency-Key", () => {
    const key = (name: string) => ({ "Idempotency-Key": `${name}-${Date.now()}` });

    it("answers a repeated request with the first run, marked as a replay, charging once", async () => {
      const headers = key("replay");
      const before = await balance();
      const count = await runCount();
      const first = await pipeline.call(
        "POST",
        "/v1/runs",
        { tags: ["waited"], environment: "held" },
        headers,
      );
      expect(first.status).to.equal(201);
      expect(first.headers.has("idempotency-replayed")).to.equal(false);
      // The same body with its fields in another order is the same request.
      const again = await pipeline.call(
        "POST",
        "/v1/runs",
        { environment: "held", tags: ["waited"] },
        headers,
      );
      expect(again.status).to.equal(201);
      expect(again.headers.get("idempotency-replayed")).to.equal("true");
      expect(again.body.id).to.equal(first.body.id);
      expect(await runCount()).to.equal(count + 1);
      expect(await balance()).to.equal(before - 1n);
      await pipeline.finished(String(first.body.id));
    });

    it("refuses the key with another body with 422 idempotency_key_reused, starting nothing", async () => {
      const headers = key("reuse");
      await pipeline.call("POST", "/v1/runs", { tags: ["waited"], environment: "held" }, headers);
      const count = await runCount();
      const other = await pipeline.call(
        "POST",
        "/v1/runs",
        { tags: ["waited"], environment: "held", name: "x" },
        headers,
      );
      expectError(other, 422, "idempotency_key_reused");
      expect(await runCount()).to.equal(count);
    });

    it("starts one run for concurrent duplicates: all answer with it, one of them not a replay", async () => {
      const headers = key("concurrent");
      const count = await runCount();
      const answers = await Promise.all(
        Array.from({ length: 5 }, () =>
          pipeline.call("POST", "/v1/runs", { tags: ["waited"], environment: "held" }, headers),
        ),
      );
      expect(answers.map((a) => a.status)).to.deep.equal([201, 201, 201, 201, 201]);
      expect(new Set(answers.map((a) => a.body.id)).size).to.equal(1);
      expect(answers.filter((a) => a.headers.get("idempotency-replayed") === "true")).to.have.length(4);
      expect(await runCount()).to.equal(count + 1);
    });

    it("keeps keys apart per API key and per operation; a refused start leaves the key free", async () => {
      const headers = key("apart");
      const count = await runCount();
      const refused = await pipeline.call("POST", "/v1/runs", { testPlan: "no such plan" }, headers);
      expectError(refused, 404, "not_found");
      const again = await pipeline.call("POST", "/v1/runs", { testPlan: "no such plan" }, headers);
      expectError(again, 404, "not_found");
      const run = await pipeline.call("POST", "/v1/runs", { tags: ["waited"], environment: "held" }, headers);
      expect(run.status).to.equal(201);
      expect(run.headers.has("idempotency-replayed")).to.equal(false);
      const rerun = await pipeline.call("POST", `/v1/runs/${run.body.id}/rerun`, {}, headers);
      expectError(rerun, 422, "idempotency_key_reused");
      const otherKey = (await createKey(ctx(), { projectId, name: "apart", creatorMemberId: ownerId }))
        .secret;
      const other = await new Pipeline(gateway.http, otherKey).call(
        "POST",
        "/v1/runs",
        { tags: ["waited"], environment: "held" },
        headers,
      );
      expect(other.status).to.equal(201);
      expect(other.headers.has("idempotency-replayed")).to.equal(false);
      expect(await runCount()).to.equal(count + 2);
    });

    it("replays a rerun too", async () => {
      const original = await start("waited");
      await pipeline.finished(original.id);
      const headers = key("rerun");
      const first = await pipeline.call("POST", `/v1/runs/${original.id}/rerun`, {}, headers);
      const again = await pipeline.call("POST", `/v1/runs/${original.id}/rerun`, {}, headers);
      expect([first.status, again.status]).to.deep.equal([201, 201]);
      expect(again.body.id).to.equal(first.body.id);
      expect(again.headers.get("idempotency-replayed")).to.equal("true");
    });

    it("refuses a malformed Idempotency-Key with 400", async () => {
      const answer = await pipeline.call(
        "POST",
        "/v1/runs",
        { tags: ["waited"] },
        { "Idempotency-Key": "has spaces" },
      );
      expectError(answer, 400, "invalid_request", "Idempotency-Key");
    });
  });
});
