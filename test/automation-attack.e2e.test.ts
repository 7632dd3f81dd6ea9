// An outsider's review of automation through the whole system (docs/automation.md,
// docs/security.md): the console's API between two organizations, webhook URLs refused with the
// production egress settings, a seconds field refused without the test-only setting, the REST
// body refusing idempotency_key, the public badge route's headers, revocation and flood bound,
// and no webhook secret or badge token in any log line or trace.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Code } from "@connectrpc/connect";
import { WebhookEvent, WebhookKind } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { expect } from "chai";
import type { System } from "../scripts/system.js";
import { consoleClient, refusal, signIn } from "./console-client.js";
import { addCases, getCase, newProject, startTestSystem, type TestProject } from "./pipeline.js";

/** A real OTLP/HTTP endpoint keeping the JSON of every export it is sent. */
async function startCollector() {
  const bodies: string[] = [];
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    bodies.push(body);
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    text: () => bodies.join("\n"),
    close: () => server.close(),
  };
}

describe("automation under attack (end to end)", function () {
  this.timeout(120_000);
  let system: System;
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let acme: TestProject;
  let rival: TestProject;
  const secrets: string[] = [];
  const badgesPerMinute = 30;

  before(async () => {
    collector = await startCollector();
    system = await startTestSystem({
      extraEnv: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_TRACES_EXPORTER: "otlp" },
      serviceEnv: {
        // The production settings: https only, loopback refused, no seconds field.
        automation: { WEBHOOK_ALLOW_HTTP: "false", EGRESS_ALLOW_CIDRS: "" },
        console: { BADGE_REQUESTS_PER_MINUTE: String(badgesPerMinute) },
      },
    });
    acme = await newProject(system, "Acme automation", { credits: 100 });
    rival = await newProject(system, "Rival automation", { credits: 100 });
    await addCases(system, acme.projectId, getCase("home", "smoke", "/"));
  });
  after(async () => {
    await system?.stop();
    collector?.close();
  });

  it("keeps one organization's schedules, webhooks, deliveries and badges from another's members", async () => {
    const owner = consoleClient(system, await signIn(system, acme.ownerId));
    const outsider = consoleClient(system, await signIn(system, rival.ownerId));
    const { environments } = await owner.listEnvironments({ projectId: acme.projectId });
    const environmentId = environments[0]?.id ?? "";
    const { testPlan } = await owner.createTestPlan({ projectId: acme.projectId, name: "Smoke" });
    const { schedule } = await owner.createSchedule({
      projectId: acme.projectId,
      name: "nightly",
      cron: "0 3 * * *",
      environmentId,
      selection: { case: "tags", value: { tags: ["smoke"] } },
      paused: true,
    });
    const { badge } = await owner.createBadge({
      projectId: acme.projectId,
      testPlanId: testPlan?.id ?? "",
      environmentId,
    });
    const token = /\/badges\/([^/]+)\.svg$/.exec(badge?.url ?? "")?.[1] ?? "";
    secrets.push(token);
    for (const projectId of [acme.projectId, rival.projectId]) {
      for (const call of [
        outsider.getSchedule({ projectId, scheduleId: schedule?.id ?? "" }),
        outsider.updateSchedule({ projectId, scheduleId: schedule?.id ?? "", paused: false }),
        outsider.deleteSchedule({ projectId, scheduleId: schedule?.id ?? "" }),
        outsider.revokeBadge({ projectId, badgeId: badge?.id ?? "" }),
      ])
        expect((await refusal(call)).code).to.be.oneOf([Code.PermissionDenied, Code.NotFound]);
    }
    expect((await refusal(outsider.listBadges({ projectId: acme.projectId }))).code).to.be.oneOf([
      Code.PermissionDenied,
      Code.NotFound,
    ]);
    // Still there.
    expect((await owner.listBadges({ projectId: acme.projectId })).badges).to.have.length(1);
    expect(
      (await owner.getSchedule({ projectId: acme.projectId, scheduleId: schedule?.id ?? "" })).schedule?.id,
    ).to.equal(schedule?.id);
  });

  it("refuses webhook URLs to loopback, metadata, link-local, other spellings of them, plain http and Slack elsewhere", async () => {
    const owner = consoleClient(system, await signIn(system, acme.ownerId));
    const urls = [
      "https://127.0.0.1/hook",
      "https://localhost/hook",
      "https://2130706433/hook",
      "https://0x7f000001/hook",
      "https://0177.0.0.1/hook",
      "https://127.1/hook",
      "https://0.0.0.0/hook",
      "https://[::1]/hook",
      "https://[::ffff:127.0.0.1]/hook",
      "https://[::ffff:a9fe:a9fe]/hook",
      "https://[fe80::1]/hook",
      "https://[fd00:ec2::254]/hook",
      "https://169.254.169.254/latest/meta-data",
      "https://[64:ff9b::a9fe:a9fe]/hook",
      // The shared range 100.64.0.0/10 and site-local fec0::/10, in several spellings, and other special-purpose ranges.
      "https://100.64.0.1/hook",
      "https://[fec0::1]/hook",
      "https://[::ffff:100.64.0.1]/hook",
      "https://1681915905/hook",
      "https://198.18.0.1/hook",
      "https://[2001:db8::1]/hook",
      "https://kubernetes.default.svc/hook",
      "https://redis/hook",
      "https://user:password@example.com/hook",
      "http://example.com/hook",
      "file:///etc/passwd",
      `https://example.com/${"a".repeat(3000)}`,
    ];
    for (const url of urls) {
      const refused = await refusal(
        owner.createWebhook({ projectId: acme.projectId, url, events: [WebhookEvent.RUN_FAILED] }),
      );
      expect(refused.code, url).to.equal(Code.InvalidArgument);
      expect(refused.rawMessage, url).to.match(/^url: /);
    }
    const slack = await refusal(
      owner.createWebhook({
        projectId: acme.projectId,
        url: "https://example.com/services/T/B/x",
        kind: WebhookKind.SLACK,
        events: [WebhookEvent.RUN_FAILED],
      }),
    );
    expect(slack.rawMessage).to.match(/Slack/);
    expect((await owner.listWebhooks({ projectId: acme.projectId })).webhooks).to.deep.equal([]);
  });

  it("refuses a schedule ticking every second without the test-only setting", async () => {
    const owner = consoleClient(system, await signIn(system, acme.ownerId));
    const { environments } = await owner.listEnvironments({ projectId: acme.projectId });
    const refused = await refusal(
      owner.createSchedule({
        projectId: acme.projectId,
        name: "every second",
        cron: "* * * * * *",
        environmentId: environments[0]?.id ?? "",
        selection: { case: "tags", value: { tags: ["smoke"] } },
      }),
    );
    expect(refused.code).to.equal(Code.InvalidArgument);
  });

  it("refuses idempotency_key in the REST body of POST /v1/runs", async () => {
    for (const field of ["idempotency_key", "idempotencyKey"]) {
      const answer = await acme.pipeline.call("POST", "/v1/runs", { tags: ["smoke"], [field]: "sch_x@1" });
      expect(answer.status, field).to.equal(400);
    }
  });

  it("serves a badge as a sandboxed, uncached image showing only the state; revoked is 404; floods are 429", async () => {
    const owner = consoleClient(system, await signIn(system, acme.ownerId));
    const { badges } = await owner.listBadges({ projectId: acme.projectId });
    const url = badges[0]?.url ?? "";
    const answer = await fetch(url);
    const svg = await answer.text();
    expect(answer.status).to.equal(200);
    expect(answer.headers.get("content-type")).to.equal("image/svg+xml; charset=utf-8");
    expect(answer.headers.get("x-content-type-options")).to.equal("nosniff");
    expect(answer.headers.get("content-security-policy")).to.match(/default-src 'none'.*sandbox/);
    expect(answer.headers.get("cache-control")).to.match(/no-cache/);
    expect(answer.headers.get("set-cookie")).to.equal(null);
    expect(svg).to.contain("unknown");
    for (const word of ["Acme", "Smoke", "demo", acme.projectId]) expect(svg).not.to.contain(word);
    // A token one character off is no badge; the same answer as a revoked one.
    const token = /\/badges\/([^/]+)\.svg$/.exec(url)?.[1] ?? "";
    const off = `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`;
    expect((await fetch(url.replace(token, off))).status).to.equal(404);
    await owner.revokeBadge({ projectId: acme.projectId, badgeId: badges[0]?.id ?? "" });
    const revoked = await fetch(url);
    expect(revoked.status).to.equal(404);
    const statuses: number[] = [];
    for (let i = 0; i < badgesPerMinute + 5; i++) statuses.push((await fetch(url)).status);
    expect(statuses).to.include(429);
  });

  it("logged and traced no webhook secret or badge token", async () => {
    const owner = consoleClient(system, await signIn(system, acme.ownerId));
    // A webhook the production rules accept needs a public https host: the secrets here are badge
    // tokens (services/automation/test/attack.test.ts reads the service's log for webhook secrets).
    expect((await owner.listWebhooks({ projectId: acme.projectId })).webhooks).to.have.length(0);
    expect(secrets.length).to.be.greaterThan(0);
    const codes = await system.stop();
    expect(codes.every((code) => code === 0)).to.equal(true);
    for (const [name, child] of system.processes) {
      const output = child.output().join("\n");
      for (const secret of secrets)
        expect(output.includes(secret), `${name} logged a badge token`).to.equal(false);
    }
    const traces = collector.text();
    // The badge requests were traced, their path without the token.
    expect(traces).to.contain('"stringValue":"/badges/[token].svg"');
    // The statements that stored and read the tokens were traced, their values not.
    expect(traces).to.match(/insert into automation\.badges[^"]*values \('\?', '\?'/);
    for (const secret of secrets) expect(traces.includes(secret), "a badge token in a trace").to.equal(false);
  });
});
