import type { Client } from "@connectrpc/connect";
import { AutomationService } from "@testrun/gen/testrun/automation/v1/automation_pb";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { bind, fromHandlerGroups, type Logger, type Orm, type ServiceWiring, startLoop } from "@testrun/kit";
import { EgressGuard, EgressPolicy, type Resolve } from "@testrun/kit/egress";
import type { Config } from "./config.js";
import { pruneHistory } from "./history.js";
import { type EventData, slackBody, standardBody } from "./payload.js";
import { RedeliveryLimits } from "./redeliveries.js";
import { badgeHandlers } from "./rpc/badges.js";
import { scheduleHandlers } from "./rpc/schedules.js";
import { webhookHandlers } from "./rpc/webhooks.js";
import { SecretCipher } from "./secrets.js";
import { sealPlainUrls } from "./webhook-urls.js";
import {
  deliverDue,
  followQuarantines,
  followRuns,
  recordDueTicks,
  startOneTick,
  type WorkerDeps,
} from "./workers.js";

export { configSchema } from "./config.js";
export { database } from "./db/index.js";

/** How often old deliveries and ticks are pruned (history.ts); a full batch prunes again at once. */
const pruneEveryMs = 10 * 60_000;
/**
 * How often URLs still stored plain are sealed (webhook-urls.ts): at start, then while an older
 * replica may still write them during an upgrade.
 */
const sealEveryMs = 60_000;

/** What the automation service is made of: its configuration, database, log, the catalog and runs. */
export interface AutomationDependencies {
  config: Config;
  orm: Orm;
  logger: Logger;
  /** Authorizes actors (CheckAccess); names plans and environments in Slack messages. */
  catalog: Client<typeof CatalogService>;
  /** StartRun for schedules, ListFinishedRuns for webhooks and badges. */
  runs: Client<typeof RunsService>;
  /** How webhook hosts are resolved: the system resolver unless a test swaps it. */
  resolve?: Resolve;
}

export interface AutomationWiring extends ServiceWiring {
  /** Stops the background loops (schedules, run following, deliveries, pruning): told to stop. */
  stopping(): Promise<void>;
}

/**
 * The automation service's wiring, for main.ts and tests alike: its handlers, and the background
 * loops (ticks, starts, following runs, deliveries, pruning) it starts at once. Several wirings on
 * one database are replicas: ticks and deliveries are claimed in PostgreSQL.
 */
export function wireAutomation({
  config,
  orm,
  logger,
  catalog,
  runs,
  resolve,
}: AutomationDependencies): AutomationWiring {
  const cipher = new SecretCipher(config.WEBHOOK_SECRETS_KEY);
  const guard = new EgressGuard(
    new EgressPolicy({ allow: config.EGRESS_ALLOW_CIDRS, deny: config.EGRESS_DENY_CIDRS }),
    {
      clusterNames: { domain: config.EGRESS_CLUSTER_DOMAIN },
      resolve,
      // An attempt gives up on a slow lookup at its deadline; this keeps the ones left running to
      // what the delivery slots alone allowed, plus as many for saves (docs/automation.md, "Egress").
      maxLookups: 2 * config.WEBHOOK_CONCURRENCY,
    },
  );
  const destinations = {
    guard,
    allowHttp: config.WEBHOOK_ALLOW_HTTP,
    slackHosts: config.SLACK_WEBHOOK_HOSTS,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
  };
  if (config.WEBHOOK_ALLOW_HTTP)
    logger.warn("WEBHOOK_ALLOW_HTTP is on: webhooks may use plain http (not for production)");
  const operator = { kind: { case: "operator" as const, value: { name: "automation" } } };
  /** Names for Slack messages; the ids when the catalog cannot say. */
  const render = async (event: EventData, kind: "standard" | "slack") => {
    if (kind === "standard") return standardBody(event, config.API_URL);
    const run = event.run;
    const [plan, environment] = run
      ? await Promise.all([
          run.testPlanId
            ? catalog
                .getTestPlan({ actor: operator, projectId: run.projectId, testPlanId: run.testPlanId })
                .then(
                  (r) => r.testPlan?.name,
                  () => run.testPlanId,
                )
            : undefined,
          catalog
            .getEnvironment({ actor: operator, projectId: run.projectId, environmentId: run.environmentId })
            .then(
              (r) => r.environment?.name,
              () => run.environmentId,
            ),
        ])
      : [undefined, ""];
    return slackBody(event, { plan, environment: environment ?? run?.environmentId ?? "" });
  };
  const deps: WorkerDeps = {
    orm,
    logger,
    catalog,
    runs,
    appUrl: config.APP_URL.replace(/\/+$/, ""),
    cipher,
    guard,
    destinations,
    render,
    retryDelaysMs: config.WEBHOOK_RETRY_DELAYS_MS,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    concurrency: config.WEBHOOK_CONCURRENCY,
  };
  // Each loop runs again at once while its pass finds work (a count > 0), else after its interval.
  const loop = (name: string, intervalMs: number, pass: () => Promise<unknown>) =>
    startLoop({ name, intervalMs, pass, logger });
  const loops = [
    loop("ticks", config.TICK_INTERVAL_MS, () => recordDueTicks(deps)),
    loop("starts", config.TICK_INTERVAL_MS, () => startOneTick(deps)),
    loop("follow", config.FOLLOW_INTERVAL_MS, () => followRuns(deps)),
    loop("quarantines", config.FOLLOW_INTERVAL_MS, () => followQuarantines(deps)),
    loop("history", pruneEveryMs, () => pruneHistory(orm, config.HISTORY_RETENTION_DAYS)),
    loop("urls", sealEveryMs, () => sealPlainUrls(orm, cipher)),
  ];
  const deliveries = loop("deliveries", config.TICK_INTERVAL_MS, () => deliverDue(deps));
  loops.push(deliveries);
  const stopping = async () => {
    await Promise.all(loops.map((l) => l.stop()));
  };
  const impl = fromHandlerGroups(
    AutomationService,
    scheduleHandlers({ orm, catalog, allowSeconds: config.SCHEDULE_ALLOW_SECONDS }),
    webhookHandlers({
      orm,
      catalog,
      cipher,
      destinations,
      wake: () => deliveries.wake(),
      redeliveries: new RedeliveryLimits({
        perCallerPerMinute: config.REDELIVERIES_PER_MEMBER_PER_MINUTE,
        perWebhookPerMinute: config.REDELIVERIES_PER_WEBHOOK_PER_MINUTE,
      }),
    }),
    badgeHandlers({ orm, catalog, appUrl: config.APP_URL }),
  );
  return {
    services: [bind(AutomationService, impl)],
    stopping,
    async stop() {
      // The loops first (a delivery in flight ends), then the webhook connections they used.
      await stopping();
      await guard.close();
    },
  };
}
