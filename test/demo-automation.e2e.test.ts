// `make run`'s automation seed (scripts/demo/automation.ts) against the whole system: the demo's
// schedule (Smoke every minute, active), its webhook to a local receiver that checks signatures
// with the standardwebhooks package, and Smoke's badge on the local environment, served as SVG.
import { AutomationService, ScheduleState } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { serviceClient } from "@testrun/kit";
import { eventually } from "@testrun/testing";
import { expect } from "chai";
import { seedDemoAutomation } from "../scripts/demo/automation.js";
import { seedDemo } from "../scripts/demo/seed.js";
import type { System } from "../scripts/system.js";
import { startWebhookReceiver, type WebhookReceiver } from "../scripts/webhook-receiver.js";
import { Pipeline, startTestSystem } from "./pipeline.js";

describe("make run's automation seed", function () {
  this.timeout(120_000);
  let system: System;
  let receiver: WebhookReceiver;
  before(async () => {
    system = await startTestSystem();
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await receiver?.close();
    await system?.stop();
  });

  it("creates an every-minute Smoke schedule, a webhook whose signed events reach the receiver, and a passing badge", async () => {
    const demo = await seedDemo(system.env, system.demoTargetUrl);
    const seeded = await seedDemoAutomation(system.env, demo, receiver.url);
    receiver.setSecrets([seeded.webhookSecret]);
    const automation = serviceClient(AutomationService, system.env.AUTOMATION_URL ?? "", {
      token: system.env.SERVICE_TOKEN ?? "",
    });
    const actor = { kind: { case: "memberId" as const, value: demo.ownerMemberId } };
    const { schedules } = await automation.listSchedules({ actor, projectId: demo.projectId });
    expect(schedules).to.have.length(1);
    expect(schedules[0]).to.include({
      cron: "* * * * *",
      state: ScheduleState.ACTIVE,
      environmentId: demo.localEnvironmentId,
    });
    expect(schedules[0]?.selection).to.deep.include({ case: "testPlanId", value: demo.smokePlanId });

    // Unknown before Smoke ran; a Smoke run's events reach the receiver signed; then passing.
    const badge = async () => (await fetch(seeded.badgeUrl)).text();
    expect(seeded.badgeUrl).to.match(/\/badges\/[A-Za-z0-9_-]+\.svg$/);
    expect(await badge()).to.include('aria-label="tests: unknown"');
    const pipeline = new Pipeline(system.gatewayUrl, demo.secret);
    const run = await pipeline.finished((await pipeline.start({ testPlan: "Smoke" })).id);
    expect(run.status).to.equal("PASSED");
    const event = await eventually(
      async () => receiver.received.find((r) => r.body.includes(run.id)),
      "the run's event at the receiver",
      30_000,
    );
    expect(event).to.include({ type: "run.finished", verified: true });
    expect(event.id).to.match(/^dlv_/);
    await eventually(
      async () => ((await badge()).includes('aria-label="tests: passing"') ? true : undefined),
      "the badge passing",
    );
  });
});
