// What a pipeline notices when parts of the system fail under it: every service a real process,
// the demo target as the environment, the REST API through the real gateway.

import { createCliContext, getBalance, listLedger } from "@testrun/cli";
import { testStream } from "@testrun/kit";
import {
  eventually,
  type ServiceProcess,
  startServiceProcess,
  startThrowawayRedis,
  type ThrowawayServer,
  withBrokenReadBack,
} from "@testrun/testing";
import { expect } from "chai";
import { Redis } from "ioredis";
import pg from "pg";
import type { System } from "../scripts/system.js";
import { addCases, getCase, newProject, type Pipeline, startTestSystem } from "./pipeline.js";

describe("runs through failures, through the real gateway", () => {
  let system: System;
  let redis: ThrowawayServer;
  let db: pg.Client;
  let projectId: string;
  let pipeline: Pipeline;
  // The executor of the system: one test at a time, so a run's second test waits QUEUED in the
  // stream while its first one runs. The SIGTERM tests replace it, and leave one like it behind.
  const oneAtATime = { CONCURRENCY: "1" };

  before(async () => {
    // A Redis of its own: this suite flushes it.
    redis = await startThrowawayRedis();
    system = await startTestSystem({
      redisUrl: redis.url,
      serviceEnv: {
        // Quick repairs: what Redis lost is published again within a second.
        // Leases of 4 s (heartbeats every 1.3 s): a killed executor's lease lapses within the test.
        runs: { RECONCILE_INTERVAL_MS: "200", REPUBLISH_AFTER_MS: "300", LEASE_MS: "4000" },
        executor: { ...oneAtATime, LEASE_MS: "4000" },
      },
    });
    db = new pg.Client({ connectionString: system.env.DATABASE_URL });
    await db.connect();
    ({ projectId, pipeline } = await newProject(system, "failures", { credits: 1000 }));
    await addCases(
      system,
      projectId,
      [
        getCase("health", "health", "/health"),
        getCase("slow page one", "two-slow", "/slow?ms=1000"),
        getCase("slow page two", "two-slow", "/slow?ms=1000"),
        getCase("a page of 1.5 s", "finishes-in-time", "/slow?ms=1500"),
        getCase("a page of 3 s", "outlasts-deadline", "/slow?ms=3000"),
        getCase("a page of 2 s", "killed-mid-test", "/slow?ms=2000"),
      ].join(""),
    );
  });
  after(async () => {
    await db?.end();
    await system?.stop();
    await redis?.stop();
  });

  /** Another executor like the system's, with `env` on top. */
  const startExecutor = (env: Record<string, string> = {}) =>
    startServiceProcess("executor", {
      ...system.executorEnv,
      ...oneAtATime,
      LEASE_MS: "4000",
      PORT: "0",
      ...env,
    });

  /** Replaces the system's executor (stopped by a test) with a fresh one, stopped with the system. */
  const replaceExecutor = async (replacement?: ServiceProcess) => {
    const executor = replacement ?? (await startExecutor());
    system.processes.set("executor", executor);
    return executor;
  };

  it("spends exactly the balance under 30 concurrent starts: 7 runs started, 23 refused with 402", async () => {
    const paying = await newProject(system, "seven credits", { credits: 7 });
    const [health] = await addCases(system, paying.projectId, getCase("health", "health", "/health"));
    const answers = await Promise.all(
      Array.from({ length: 30 }, () =>
        paying.pipeline.call("POST", "/v1/runs", { testCaseIds: [health?.id] }),
      ),
    );
    const started = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status === 402);
    expect(started).to.have.length(7);
    expect(refused).to.have.length(23);
    for (const { body } of refused) {
      expect(body).to.include({ code: "insufficient_credits", required: 1, available: 0 });
    }

    // The started runs really run, and nothing comes back: they executed.
    for (const { body } of started) {
      expect((await paying.pipeline.finished(String(body.id))).status).to.equal("PASSED");
    }
    const ctx = createCliContext(system.env);
    expect(await getBalance(ctx, { projectId: paying.projectId })).to.equal(0n);
    const ledger = await listLedger(ctx, { projectId: paying.projectId, limit: 100 });
    expect(ledger.reduce((sum, entry) => sum + entry.amount, 0n)).to.equal(0n);
    expect(ledger.map((entry) => entry.amount).sort()).to.deep.equal([...Array(7).fill(-1n), 7n]);
    const listed = await paying.pipeline.call("GET", "/v1/runs?limit=100");
    expect((listed.body.runs as unknown[]).length).to.equal(7);
  });

  it("answers 500 with the run's id and url when the started run cannot be read back, and the run goes on", async () => {
    const answer = await withBrokenReadBack(db, () =>
      pipeline.call("POST", "/v1/runs", { tags: ["health"] }),
    );
    expect(answer.status).to.equal(500);
    expect(answer.body.code).to.equal("internal");
    const id = String(answer.body.id);
    expect(id).to.match(/^run_/);
    expect(answer.body.url)
      .to.be.a("string")
      .and.match(new RegExp(`/projects/${projectId}/runs/${id}$`));

    // The client follows that run instead of starting another: it exists, charged, and finishes.
    const followed = await pipeline.call("GET", `/v1/runs/${id}`);
    expect(followed.status).to.equal(200);
    expect(followed.body.url).to.equal(answer.body.url);
    expect((await pipeline.finished(id)).status).to.equal("PASSED");
  });

  it("finishes a run whose queued test Redis lost (FLUSHALL) while its other test ran", async () => {
    const run = await pipeline.start({ tags: ["two-slow"] });
    // One test RUNNING, the other QUEUED in the stream behind it (the executor runs one at a time).
    const during = await pipeline.running(run.id);
    expect(during.tests.map((t) => t.status).sort()).to.deep.equal(["QUEUED", "RUNNING"]);

    const client = new Redis(redis.url);
    try {
      expect(await client.flushall()).to.equal("OK");

      // Nothing on the stream any more: only the reconciler's republishing from PostgreSQL can
      // bring the QUEUED test back to an executor.
      const done = await pipeline.finished(run.id);
      expect(done.status).to.equal("PASSED");
      expect(done.tests.map((t) => t.status)).to.deep.equal(["PASSED", "PASSED"]);
      // Handled entries, republished copies included, are deleted: the stream does not grow for ever.
      await eventually(
        async () => ((await client.xlen(testStream)) === 0 ? true : undefined),
        "an empty stream",
      );
    } finally {
      client.disconnect();
    }
  });

  it("lets an executor SIGTERMed mid-test finish the test before it exits 0", async () => {
    const executor = system.processes.get("executor");
    try {
      const run = await pipeline.start({ tags: ["finishes-in-time"] });
      await pipeline.running(run.id);
      // SHUTDOWN_TIMEOUT_MS is 10 s by default: time enough for the 1.5 s page.
      expect(await executor?.stop("SIGTERM")).to.equal(0);
      // No executor runs any more, yet the run finished: the stopping one completed its test.
      const after = await pipeline.getRun(run.id);
      expect(after.finished).to.equal(true);
      expect(after.status).to.equal("PASSED");
      expect(executor?.output().join("\n")).not.to.contain("test handed back");
    } finally {
      await replaceExecutor();
    }
  });

  it("has an executor that drains after SIGTERM take no new test meanwhile", async () => {
    await system.processes.get("executor")?.stop("SIGTERM");
    let draining: ServiceProcess | undefined;
    let replaced = false;
    try {
      draining = await startExecutor({ SHUTDOWN_DRAIN_MS: "4000" });
      const exited = draining.stop("SIGTERM");
      await eventually(
        async () => (draining?.output().join("\n").includes("shutting down") ? true : undefined),
        "the executor to start shutting down",
      );
      // Started while the only executor drains: a test it would run in milliseconds, were it taking any.
      const run = await pipeline.start({ tags: ["health"] });
      expect(await exited).to.equal(0);
      const left = await pipeline.getRun(run.id);
      expect(left.tests.map((t) => t.status)).to.deep.equal(["QUEUED"]);
      await replaceExecutor();
      replaced = true;
      expect((await pipeline.finished(run.id)).status).to.equal("PASSED");
    } finally {
      await draining?.stop("SIGKILL");
      if (!replaced) await replaceExecutor();
    }
  });

  it("has an executor SIGTERMed with a test outlasting its deadline hand it back, exit 0, and the run finish", async () => {
    await system.processes.get("executor")?.stop("SIGTERM");
    let impatient: ServiceProcess | undefined;
    let successor: ServiceProcess | undefined;
    try {
      impatient = await startExecutor({ SHUTDOWN_TIMEOUT_MS: "300" });
      const run = await pipeline.start({ tags: ["outlasts-deadline"] });
      await pipeline.running(run.id);
      expect(await impatient.stop("SIGTERM")).to.equal(0);
      expect(impatient.output().join("\n")).to.contain("test handed back");
      // Handed back: QUEUED again, waiting for an executor.
      const waiting = await pipeline.getRun(run.id);
      expect(waiting.finished).to.equal(false);
      expect(waiting.tests.map((t) => t.status)).to.deep.equal(["QUEUED"]);

      successor = await startExecutor();
      expect((await pipeline.finished(run.id)).status).to.equal("PASSED");
    } finally {
      await impatient?.stop("SIGTERM");
      await replaceExecutor(successor);
    }
  });

  it("gives a test whose executor was SIGKILLed mid-test an executor_lost attempt, runs it again, and ends PASSED, not flaky", async () => {
    const killed = system.processes.get("executor");
    let successor: ServiceProcess | undefined;
    try {
      const run = await pipeline.start({ tags: ["killed-mid-test"] });
      await pipeline.running(run.id);
      await killed?.stop("SIGKILL");
      // Nobody heartbeats the lease now: it lapses, and the next executor runs the test again.
      successor = await startExecutor();
      const done = await pipeline.finished(run.id);
      expect(done.status).to.equal("PASSED");
      const { tests, flakyTests } = done as unknown as {
        flakyTests: number;
        tests: {
          status: string;
          flaky: boolean;
          cause: string | null;
          attempts: { number: number; status: string; cause: string | null }[];
        }[];
      };
      const [test] = tests;
      expect(test).to.include({ status: "PASSED", flaky: false, cause: null });
      expect(test?.attempts.map((a) => [a.number, a.status, a.cause])).to.deep.equal([
        [1, "FAILED", "executor_lost"],
        [2, "PASSED", null],
      ]);
      expect(flakyTests).to.equal(0);
    } finally {
      await replaceExecutor(successor);
    }
  });
});
