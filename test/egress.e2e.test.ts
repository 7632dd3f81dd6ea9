// The executors' egress guard end to end (docs/runs.md, "Egress"): real executor processes without
// the loopback allowance every local executor has (scripts/system.ts), runs started through the
// real gateway, targets that record every request they get.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createCliContext, createEnvironment } from "@testrun/cli";
import { eventually, findFreePort, type ServiceProcess, startServiceProcess } from "@testrun/testing";
import { expect } from "chai";
import type { System } from "../scripts/system.js";
import { HeldTarget } from "./held-target.js";
import { addCases, getCase, newProject, type Pipeline, startTestSystem } from "./pipeline.js";

describe("executors' egress guard, end to end", () => {
  let system: System;
  let pipeline: Pipeline;
  let projectId: string;
  /** On 127.0.0.1: refused to the executors under test. */
  let refused: HeldTarget;
  /** On 127.0.0.2, the one loopback address they are allowed: redirects to `refused`. */
  let allowed: Server;
  let allowedUrl: string;
  const unreachable = "environment unreachable: no HTTP answer from the base URL";
  const cannotConnect = 'step 1 "get it": request failed: could not connect to the host';

  before(async function () {
    // Every service a process, five environments and five cases: more than a test's 30 s on a busy machine.
    this.timeout(90_000);
    refused = await HeldTarget.start();
    allowed = createServer((req, res) => {
      if (req.url === "/redirect") res.writeHead(302, { location: `${refused.url}/secret` }).end();
      else res.writeHead(200).end("ok");
    });
    allowed.listen(0, "127.0.0.2");
    await once(allowed, "listening");
    allowedUrl = `http://127.0.0.2:${(allowed.address() as AddressInfo).port}`;
    system = await startTestSystem({
      serviceEnv: {
        // Strict: of loopback, only 127.0.0.2 (one /32 carved out of the default block).
        executor: { EGRESS_ALLOW_CIDRS: "127.0.0.2/32" },
        // A test handed back by a stopping executor is published again at once.
        runs: { RECONCILE_INTERVAL_MS: "200", REPUBLISH_AFTER_MS: "300" },
      },
    });
    ({ projectId, pipeline } = await newProject(system, "egress", { credits: 1000 }));
    const closedPort = await findFreePort();
    const environments = {
      loopback: refused.url,
      localhost: refused.url.replace("127.0.0.1", "localhost"),
      unknown: "http://no-such-host.invalid",
      closed: `http://127.0.0.2:${closedPort}`,
      allowed: allowedUrl,
    };
    const ctx = createCliContext(system.env);
    for (const [name, baseUrl] of Object.entries(environments))
      await createEnvironment(ctx, { projectId, name, baseUrl });
    await addCases(
      system,
      projectId,
      [
        getCase("probe", "probe", "/"),
        getCase("allowed page", "allowed", "/ok"),
        getCase("redirect", "allowed", "/redirect"),
        getCase("passes first", "mid-run", "/"),
        getCase("held second", "mid-run", "/held"),
      ].join(""),
    );
  });
  after(async () => {
    await system?.stop();
    await refused?.stop();
    allowed?.close();
  });

  const runOn = async (environment: string, tag: string) =>
    pipeline.finished((await pipeline.start({ tags: [tag], environment })).id);

  it("skips a run whose base URL is loopback, by address or by name, with the one message, sending it nothing", async () => {
    for (const environment of ["loopback", "localhost"]) {
      const run = await runOn(environment, "probe");
      expect(run.status, environment).to.equal("SKIPPED");
      expect(run.skipReason).to.equal("environment_unreachable");
      expect(run.tests.map((t) => t.summary)).to.deep.equal([unreachable]);
    }
    expect(refused.received).to.deep.equal([]);
    // Only the operator's log says why.
    // Logs are written asynchronously: the line may follow the run's end by a moment.
    await eventually(
      async () =>
        system.processes
          .get("executor")
          ?.output()
          .some((l) => l.includes('"cause":"EGRESS_REFUSED"')) || undefined,
      "the executor's log line of the refused connection",
    );
  });

  it("says the same of an unknown host and of a port nothing listens on: no port scanner", async () => {
    for (const environment of ["unknown", "closed"]) {
      const run = await runOn(environment, "probe");
      expect(run.status, environment).to.equal("SKIPPED");
      expect(run.tests.map((t) => t.summary)).to.deep.equal([unreachable]);
    }
  });

  it("runs tests against an allowed address; a redirect from it to a refused one is not followed", async () => {
    const run = await runOn("allowed", "allowed");
    const summaries = Object.fromEntries(run.tests.map((t) => [t.name, t.summary]));
    expect(summaries).to.deep.equal({
      "allowed page": "1 step passed",
      redirect: 'step 1 "get it": expected status 200, got 302',
    });
    expect(refused.received).to.deep.equal([]);
  });

  it("fails a step against a refused address once its run is under way, with the one message, sending it nothing", async () => {
    // An executor allowed loopback (as every local one) runs the first test and holds the second;
    // stopped, it hands that back to a strict one, whose pre-run check cannot skip a run a test
    // of which already passed: the step itself is refused.
    const release = refused.hold("/held");
    await system.processes.get("executor")?.stop("SIGTERM");
    const permissive = await startServiceProcess("executor", {
      ...system.executorEnv,
      PORT: "0",
      CONCURRENCY: "2",
      SHUTDOWN_TIMEOUT_MS: "300",
    });
    let strict: ServiceProcess | undefined;
    try {
      const started = await pipeline.start({ tags: ["mid-run"], environment: "loopback" });
      await refused.arrived("/held");
      const running = await eventually(async () => {
        const run = await pipeline.getRun(started.id);
        return run.tests.some((t) => t.status === "PASSED") ? run : undefined;
      }, "the first test to pass");
      expect(Object.fromEntries(running.tests.map((t) => [t.name, t.status]))).to.deep.equal({
        "passes first": "PASSED",
        "held second": "RUNNING",
      });
      strict = await startServiceProcess("executor", {
        ...system.executorEnv,
        PORT: "0",
        EGRESS_ALLOW_CIDRS: "",
        // A test's completion is logged at debug (nothing per test at info).
        LOG_LEVEL: "debug",
      });
      system.processes.set("executor", strict);
      expect(await permissive.stop("SIGTERM")).to.equal(0);
      const before = refused.received.length;

      const run = await pipeline.finished(started.id);
      expect(run.status).to.equal("FAILED");
      expect(run.tests.find((t) => t.name === "held second")?.summary).to.equal(cannotConnect);
      expect(refused.received).to.have.length(before);
      const completed = strict;
      await eventually(
        async () => completed.output().some((l) => l.includes("test completed")) || undefined,
        "the strict executor's log line of the completed test",
      );
    } finally {
      release();
      await permissive.stop("SIGTERM");
    }
  });
});
