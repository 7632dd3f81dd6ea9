// `make run`: the whole system on this machine, each service its own process on its documented port,
// against DATABASE_URL / REDIS_URL or throwaway servers, with a demo project seeded. Ctrl-C stops everything.
import { once } from "node:events";
import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { createCliContext, createSignInLink } from "@testrun/cli";
import { startThrowawayPostgres, startThrowawayRedis, type ThrowawayServer } from "@testrun/testing";
import { seedDemoAutomation } from "./demo/automation.js";
import { seedDemo } from "./demo/seed.js";
import { type System, startSystem } from "./system.js";
import { terminalLog } from "./terminal-log.js";
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js";

const owned: ThrowawayServer[] = [];
let system: System | undefined;
let receiver: WebhookReceiver | undefined;
let stopping = false;

async function stopAll(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    await receiver?.close();
    await system?.stop();
    await Promise.all(owned.map((server) => server.stop()));
  }
  process.exit(code);
}
process.on("SIGINT", () => void stopAll(0));
process.on("SIGTERM", () => void stopAll(0));

/**
 * The banner's line on the demo's browser tests: how to start them, or, on a machine without the
 * browser the executor drives (scripts/install-prerequisites.sh could not install it), that they
 * will wait for an executor that can run them, and why.
 */
async function browserTestsLine(): Promise<string> {
  const chromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
  const start = `-d '{"tags": ["browser"]}'`;
  try {
    await access(chromium, constants.X_OK);
    return `  # the browser tests (one passes, one fails on purpose with a screenshot): ${start}`;
  } catch {
    const deadlineMinutes = Math.round(Number(process.env.DISPATCH_DEADLINE_MS ?? 15 * 60_000) / 60_000);
    return [
      `  # the browser tests: ${start}. This machine has no ${chromium} (apt-get install -y chromium as root),`,
      "  # so its executor takes no browser tests: they wait as QUEUED for an executor that can run them, and",
      `  # after the dispatch deadline (${deadlineMinutes} min) end SKIPPED, "no executor here can run browser tests", credits back`,
    ].join("\n");
  }
}

/**
 * How the services' lines are printed: readable, each behind its service's name (terminal-log.ts);
 * LOG_FORMAT=json prints them as the services write them (for jq, or a log shipper). LOG_LEVEL
 * (debug, say) reaches every service through the environment.
 */
function printLine(): (line: string, service: string) => void {
  if (process.env.LOG_FORMAT === "json") return (line) => console.log(line);
  const format = terminalLog({
    colorize: Boolean(process.stdout.isTTY),
    traceIds: Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT),
  });
  return (line, service) => console.log(format(line, service));
}

/** Credits each project made here gets (NEW_PROJECT_CREDITS of the catalog); set it to try another. */
const newProjectCredits = process.env.NEW_PROJECT_CREDITS ?? "10000";
/** How many projects of an organization get them (NEW_PROJECT_GRANTS_PER_ORGANIZATION): enough to try things. */
const newProjectGrants = process.env.NEW_PROJECT_GRANTS_PER_ORGANIZATION ?? "1000";

try {
  const postgres = process.env.DATABASE_URL ? undefined : await startThrowawayPostgres();
  const redis = process.env.REDIS_URL ? undefined : await startThrowawayRedis();
  owned.push(...[postgres, redis].filter((s): s is ThrowawayServer => s !== undefined));

  system = await startSystem({
    databaseUrl: process.env.DATABASE_URL ?? postgres?.url ?? "",
    redisUrl: process.env.REDIS_URL ?? redis?.url ?? "",
    ports: "fixed",
    httpPort: Number(process.env.HTTP_PORT ?? 8080),
    // Generous for the demo: a project made in the console can run at once (docs/runs.md, "Credits").
    serviceEnv: {
      catalog: {
        NEW_PROJECT_CREDITS: newProjectCredits,
        NEW_PROJECT_GRANTS_PER_ORGANIZATION: newProjectGrants,
      },
    },
    keepOutput: false,
    // The terminal shows every line already, and Ctrl-C ends every service: no exit reports.
    reportExits: false,
    onLine: printLine(),
  });
  const demo = await seedDemo(system.env, system.demoTargetUrl);
  // The demo webhook's receiver: each event it gets, and whether its signature verified, in this output.
  receiver = await startWebhookReceiver({
    onReceived: (webhook) =>
      console.log(
        `[webhook-receiver] ${webhook.type || "(not JSON)"} webhook-id ${webhook.id} signature ${webhook.verified ? "verified" : "INVALID"}`,
      ),
  });
  const automation = await seedDemoAutomation(system.env, demo, receiver.url);
  receiver.setSecrets([automation.webhookSecret]);
  const signIn = await createSignInLink(createCliContext(system.env), { memberId: demo.ownerMemberId });
  console.log(`
Testrun is running (Ctrl-C stops everything). A demo project is seeded.

Web console: open this one-time link to sign in as the demo owner (${signIn.email}; valid 15 minutes;
a new one: services/cli/bin/testrunctl member sign-in-link ${demo.ownerMemberId}):

  ${signIn.url}

The demo project's API key, shown once:

  export TESTRUN_API_KEY=${demo.secret}
  curl -s -H "Authorization: Bearer $TESTRUN_API_KEY" ${system.gatewayUrl}/v1/project
  curl -s -H "Authorization: Bearer $TESTRUN_API_KEY" -H 'Content-Type: application/json' \\
       -d '{"testPlan": "Smoke"}' ${system.gatewayUrl}/v1/runs
  # the answer's "url" opens the run in the web console, where it follows the run live
${await browserTestsLine()}
  curl -s -H "Authorization: Bearer $TESTRUN_API_KEY" ${system.gatewayUrl}/v1/runs/<id from the answer above>

Its content token (import only, shown once): pushes a folder of Playwright specs, one test case each
(docs/pipelines.md, "Pushing specs"):

  TESTRUN_URL=${system.gatewayUrl} TESTRUN_CONTENT_TOKEN=${demo.contentToken} npx testrun push <folder> --tags e2e
  TESTRUN_URL=${system.gatewayUrl} TESTRUN_API_KEY=${demo.secret} npx testrun run --tags e2e

Automation: the schedule "Smoke every minute" starts the Smoke plan on its own each minute; every
run's events go to a local receiver (${receiver.url}) that checks their signatures: see the
[webhook-receiver] lines in this output. The Smoke plan's status badge on the local environment:

  ${automation.badgeUrl}

Prometheus metrics, one port per component (docs/operations.md):
${[...system.metricsUrls].map(([name, url]) => `  curl -s ${url}   # ${name}`).join("\n")}

A project you create in the console starts with ${Number(newProjectCredits).toLocaleString("en")} credits (NEW_PROJECT_CREDITS; the first ${Number(newProjectGrants).toLocaleString("en")} of an organization, NEW_PROJECT_GRANTS_PER_ORGANIZATION); more:
  SERVICE_TOKEN=${system.env.SERVICE_TOKEN} services/cli/bin/testrunctl credits grant <n> --project <prj_…> --reason "<why>"

Admin CLI against this system:  SERVICE_TOKEN=${system.env.SERVICE_TOKEN} services/cli/bin/testrunctl --help
`);
  await Promise.race([...system.processes.values()].map((service) => once(service.process, "exit")));
  // Ctrl-C reaches the children too: they exiting then is the shutdown under way, not a failure.
  if (stopping) await new Promise(() => {});
  console.error("a process exited; stopping the others");
  await stopAll(1);
} catch (error) {
  console.error(error);
  await stopAll(1);
}
