// What the services say at info, the level `make run` and a deployment show (docs/operations.md,
// "Logs"): nothing for the routine work of an idle system (following finished runs, probes,
// scrapes, health checks), and one line for each event a person looks for: a run started, a run
// finished, a webhook delivery that failed.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@testrun/gen/grpc/health/v1/health_pb";
import {
  AutomationService,
  NotifyMode,
  WebhookEvent,
} from "@testrun/gen/testrun/automation/v1/automation_pb";
import { serviceClient } from "@testrun/kit";
import { eventually, sampleValue, scrapeMetrics } from "@testrun/testing";
import { expect } from "chai";
import { seedDemo } from "../scripts/demo/seed.js";
import type { System } from "../scripts/system.js";
import { Pipeline, startTestSystem } from "./pipeline.js";

/** A parsed log line of one of the system's processes. */
type Entry = Record<string, unknown> & { service: string; level?: string; msg?: string };

describe("logs at info: events, not routine", () => {
  let system: System;
  /** A receiver that refuses every delivery; the path of its URL stands for a Slack URL's secret. */
  let receiver: Server;
  const hookPath = "/hooks/T0SECRETPATH/B0SECRETPATH";

  /** The lines each process wrote from `marks` on (all of them without), parsed where JSON. */
  const linesSince = (marks: Map<string, number> = new Map()) =>
    [...system.processes].flatMap(([name, child]) =>
      child
        .output()
        .slice(marks.get(name) ?? 0)
        .map((line): Entry => {
          try {
            return { service: name, ...(JSON.parse(line) as Record<string, unknown>) };
          } catch {
            return { service: name, msg: line };
          }
        }),
    );
  const mark = () => new Map([...system.processes].map(([name, child]) => [name, child.output().length]));

  before(async () => {
    // HTTP tests only: the browser's first launch is the executor's start, not routine work.
    system = await startTestSystem({ serviceEnv: { executor: { EXECUTOR_STEP_KINDS: "http" } } });
    receiver = createServer((req, res) => {
      res.statusCode = 500;
      res.end(`no hook at ${req.url}`);
    });
    receiver.listen(0, "127.0.0.1");
    await once(receiver, "listening");
  });
  after(async () => {
    receiver?.close();
    await system?.stop();
  });

  it("says nothing at info while idle: following finished runs, probes, scrapes and health checks", async () => {
    const runsMetrics = String(system.metricsUrls.get("runs"));
    // The automation service asks the runs service for finished runs every second: each is one RPC.
    const follows = async () =>
      sampleValue(await scrapeMetrics(runsMetrics), "testrun_rpc_server_requests_total", {
        rpc_method: "ListFinishedRuns",
      });
    const nextFollow = async () => {
      const before = await follows();
      await eventually(
        async () => ((await follows()) > before ? true : undefined),
        "the automation service's next follow of finished runs",
      );
    };
    // What the kubelet and Prometheus do to every component, all the time.
    const routine = async () => {
      for (const url of [system.gatewayUrl, system.consoleUrl])
        for (const path of ["/healthz", "/readyz"])
          expect((await fetch(`${url}${path}`)).status, `${url}${path}`).to.equal(200);
      for (const [name, child] of system.processes) {
        if (name === "demo-target") continue;
        const health = createClient(Health, createGrpcTransport({ baseUrl: child.url }));
        expect((await health.check({ service: "" })).status, name).to.equal(Status.SERVING);
      }
      for (const url of system.metricsUrls.values()) await scrapeMetrics(url);
    };

    // Started: every service said it listens (its last line of the start) before startSystem returned.
    await nextFollow();
    const idle = mark();
    for (let round = 0; round < 3; round++) {
      await routine();
      await nextFollow();
    }
    // One more follow: the lines of every round above have had a second to arrive.
    await nextFollow();
    expect(linesSince(idle)).to.deep.equal([]);
  });

  it("logs a run's start and end once each, with its ids, and a failed webhook delivery as a warning", async () => {
    const demo = await seedDemo(system.env, system.demoTargetUrl);
    const automation = serviceClient(AutomationService, String(system.env.AUTOMATION_URL), {
      token: String(system.env.SERVICE_TOKEN),
      timeoutMs: 10_000,
    });
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}${hookPath}`;
    const { webhook } = await automation.createWebhook({
      actor: { kind: { case: "memberId", value: demo.ownerMemberId } },
      projectId: demo.projectId,
      url: receiverUrl,
      events: [WebhookEvent.RUN_FINISHED, WebhookEvent.RUN_FAILED],
      notifyMode: NotifyMode.EVERY_RUN,
    });
    const pipeline = new Pipeline(system.gatewayUrl, demo.secret);
    const passing = await pipeline.start({ testPlan: "Smoke" });
    const failing = await pipeline.start({ tags: ["regression"] });
    expect((await pipeline.finished(passing.id)).status).to.equal("PASSED");
    expect((await pipeline.finished(failing.id)).status).to.equal("FAILED");

    const ofRun = (runId: string, msg: string) =>
      linesSince().filter((line) => line.msg === msg && line.runId === runId);
    // A run's end is logged when its last result commits, before the executor is answered.
    const failedDelivery = await eventually(
      async () =>
        linesSince().find((line) => line.msg === "webhook delivery failed; retrying" && line.deliveryId),
      "the automation service's warning of the refused delivery",
    );
    for (const [run, status, tests] of [
      [passing.id, "PASSED", 2],
      [failing.id, "FAILED", 2],
    ] as const) {
      const [started, ...startedAgain] = ofRun(run, "run started");
      expect(startedAgain, `${run} started once`).to.deep.equal([]);
      expect(started).to.include({ level: "info", service: "runs", projectId: demo.projectId, tests });
      const [finished, ...finishedAgain] = ofRun(run, "run finished");
      expect(finishedAgain, `${run} finished once`).to.deep.equal([]);
      expect(finished).to.include({ level: "info", service: "runs", projectId: demo.projectId, status });
    }
    expect(failedDelivery).to.include({
      level: "warn",
      service: "automation",
      webhookId: webhook?.id,
      projectId: demo.projectId,
      attempts: 1,
    });
    // The receiver's answer quoted the URL's path: the log names the URL, never shows it.
    expect(failedDelivery.reason).to.equal("answered 500: no hook at [url]");
    expect(JSON.stringify(linesSince())).not.to.contain("SECRETPATH");
    // Nothing a service does for a run is routine at info: each of its calls logs at debug.
    expect(linesSince().filter((line) => line.msg === "rpc ok")).to.deep.equal([]);
  });
});
