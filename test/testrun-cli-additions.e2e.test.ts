// `testrun` with the REST additions it is built for (docs/rest-api.md): long-poll, cancel, rerun
// and Idempotency-Key, through the real gateway with every service a real process. One executor
// slot, so a held test keeps the run's other tests QUEUED (not yet executed) for as long as needed.
import { createCliContext, createEnvironment, getBalance, listLedger } from "@testrun/cli";
import { expect } from "chai";
import { seedDemo } from "../scripts/demo/seed.js";
import type { System } from "../scripts/system.js";
import { HeldTarget } from "./held-target.js";
import { addCases, getCase, Pipeline, type RunBody, startTestSystem } from "./pipeline.js";
import { cliEnv, GatewayProxy, runCli, startCli } from "./testrun-cli.js";

describe("testrun with long-poll, cancel, rerun and Idempotency-Key", function () {
  this.timeout(90_000);
  let system: System;
  let pipeline: Pipeline;
  let projectId: string;
  let env: Record<string, string>;
  let held: HeldTarget;
  const ctx = () => createCliContext(system.env);

  before(async () => {
    held = await HeldTarget.start();
    system = await startTestSystem({ serviceEnv: { executor: { CONCURRENCY: "1" } } });
    const demo = await seedDemo(system.env, system.demoTargetUrl);
    projectId = demo.projectId;
    pipeline = new Pipeline(system.gatewayUrl, demo.secret);
    await createEnvironment(ctx(), { projectId, name: "held", baseUrl: held.url });
    await addCases(
      system,
      projectId,
      getCase("held a", "three", "/held/a") +
        getCase("held b", "three", "/held/b") +
        getCase("held c", "three", "/held/c"),
    );
    env = cliEnv(system.gatewayUrl, demo.secret);
  });
  after(async () => {
    await held?.stop();
    await system?.stop();
  });

  const runIdOf = (stdout: string) => String(/Run (run_[0-9a-z]+)/.exec(stdout)?.[1]);
  /** Holds the three held paths; resolves once the first test is executing. */
  const holdThree = () => {
    const releases = ["/held/a", "/held/b", "/held/c"].map((path) => held.hold(path));
    const executing = Promise.race(["/held/a", "/held/b", "/held/c"].map((path) => held.arrived(path)));
    const release = () => {
      for (const releaseOne of releases) releaseOne();
    };
    return { executing, release };
  };

  it("long-polls: finishes as soon as the run does, with one read per 30 s", async () => {
    const proxy = await GatewayProxy.start(system.gatewayUrl);
    const { executing, release } = holdThree();
    try {
      const cli = startCli(["run", "--tags", "three", "--env", "held"], { ...env, TESTRUN_URL: proxy.url });
      await executing;
      await cli.printed("RUNNING");
      const released = Date.now();
      release();
      const { code, stdout } = await cli.done;
      expect(code, stdout).to.equal(0);
      // Seconds, not the 15 s a polling client would wait for its next read: room for a busy machine.
      expect(Date.now() - released).to.be.below(8_000);
      const reads = proxy.requests.filter((r) => r.method === "GET" && r.path.startsWith("/v1/runs/"));
      // The run read once (the long poll), then, once it finished, its comparison with its base
      // for the last line (docs/pipelines.md, "New failures").
      expect(reads.map((r) => r.path.replace(/run_\w+/, "ID"))).to.deep.equal([
        "/v1/runs/ID?wait=30",
        "/v1/runs/ID/comparison",
      ]);
    } finally {
      release();
      await proxy.stop();
    }
  });

  it("SIGTERM cancels the run: SKIPPED (cancelled), the tests not yet executed refunded in the ledger", async () => {
    const { executing, release } = holdThree();
    try {
      const before = await getBalance(ctx(), { projectId });
      const cli = startCli(["run", "--tags", "three", "--env", "held"], env);
      await cli.printed(/Run run_\w+/);
      await executing;
      cli.child.kill("SIGTERM");
      const { code, stdout } = await cli.done;
      expect(code, stdout).to.equal(143);
      expect(stdout).to.contain("SIGTERM: cancelling run");
      expect(stdout).to.match(/Cancelled run run_\w+: SKIPPED \(cancelled\)/);
      const run = await pipeline.getRun(runIdOf(stdout));
      expect(run.status).to.equal("SKIPPED");
      expect(run.skipReason).to.equal("cancelled");
      const ledger = await listLedger(ctx(), { projectId, limit: 10, runId: run.id });
      const refund = ledger.find((entry) => entry.amount > 0n);
      expect(refund?.amount).to.equal(2n);
      expect(await getBalance(ctx(), { projectId })).to.equal(before - 3n + 2n);
    } finally {
      release();
    }
  });

  it("--cancel-on-timeout cancels the run when the wait times out, and still exits 3", async () => {
    const { executing, release } = holdThree();
    try {
      const cli = startCli(
        ["run", "--tags", "three", "--env", "held", "--timeout", "3s", "--cancel-on-timeout"],
        env,
      );
      await executing;
      const { code, stdout } = await cli.done;
      expect(code, stdout).to.equal(3);
      expect(stdout).to.match(/Cancelled run run_\w+: SKIPPED \(cancelled\)/);
      expect((await pipeline.getRun(runIdOf(stdout))).skipReason).to.equal("cancelled");
    } finally {
      release();
    }
  });

  it("cancel stops a run, and is content with one that already finished", async () => {
    const { executing, release } = holdThree();
    try {
      const started = await pipeline.start({ tags: ["three"], environment: "held" });
      await executing;
      const cancelled = await runCli(["cancel", started.id], env);
      expect(cancelled.code, cancelled.stdout + cancelled.stderr).to.equal(0);
      expect(cancelled.stdout).to.contain(`Cancelled run ${started.id}: SKIPPED (cancelled)`);
      const again = await runCli(["cancel", started.id], env);
      expect(again.code, again.stderr).to.equal(0);
      expect(again.stdout).to.contain(`Run ${started.id} had already finished`);
      const unknown = await runCli(["cancel", "run_01m80000000000000000000000"], env);
      expect(unknown.code).to.equal(4);
      expect(unknown.stderr).to.contain("HTTP 404");
    } finally {
      release();
    }
  });

  it("rerun --failed runs the failed tests again; nothing to rerun is a 400 with the API's message", async () => {
    const failed = await runCli(["run", "--tags", "regression"], env);
    expect(failed.code).to.equal(1);
    const rerun = await runCli(["rerun", runIdOf(failed.stdout), "--failed"], env);
    expect(rerun.code, rerun.stdout + rerun.stderr).to.equal(1);
    const again = await pipeline.getRun(runIdOf(rerun.stdout));
    expect(again.id).to.not.equal(runIdOf(failed.stdout));
    expect(again.tests.map((t) => t.name)).to.deep.equal(["a wrong password is forbidden"]);

    const passed = await runCli(["run", "--plan", "Smoke"], env);
    expect(passed.code).to.equal(0);
    const nothing = await runCli(["rerun", runIdOf(passed.stdout), "--failed"], env);
    expect(nothing.code).to.equal(4);
    expect(nothing.stderr).to.contain("(HTTP 400");
    const all = await runCli(["rerun", runIdOf(passed.stdout)], env);
    expect(all.code, all.stdout).to.equal(0);
    expect((await pipeline.getRun(runIdOf(all.stdout))).totalTests).to.equal(2);
  });

  it("refuses a run beyond 500 tests with exit code 4 and the API's 400 naming the limit", async () => {
    const ids = Array.from({ length: 501 }, (_, i) => `tc_${String(i).padStart(26, "0")}`);
    const refused = await runCli(["run", "--cases", ids.join(",")], env);
    expect(refused.code, refused.stdout + refused.stderr).to.equal(4);
    expect(refused.stderr).to.contain("(HTTP 400");
    expect(refused.stderr).to.contain("at most 500");
  });

  it("repeats a start that got no answer with the same Idempotency-Key: one run, the replay said", async () => {
    const proxy = await GatewayProxy.start(system.gatewayUrl);
    let dropped = false;
    proxy.intercept = async (request, forward) => {
      if (request.method !== "POST" || dropped) return undefined;
      dropped = true;
      await forward();
      return "drop";
    };
    try {
      const before = ((await pipeline.call("GET", "/v1/runs?limit=100")).body.runs as RunBody[]).length;
      const { code, stdout } = await runCli(["run", "--plan", "Smoke"], { ...env, TESTRUN_URL: proxy.url });
      expect(code, stdout).to.equal(0);
      expect(stdout).to.contain("the API answered with the run an earlier attempt of this command started");
      const posts = proxy.requests.filter((r) => r.method === "POST");
      expect(posts).to.have.length(2);
      expect(posts[1]?.headers["idempotency-key"]).to.equal(posts[0]?.headers["idempotency-key"]);
      const after = ((await pipeline.call("GET", "/v1/runs?limit=100")).body.runs as RunBody[]).length;
      expect(after - before).to.equal(1);
    } finally {
      await proxy.stop();
    }
  });
});
