import { baseConfigSchema, portVar, postgresUrl, serviceUrl } from "@testrun/kit";
import { egressAllowCidrs, egressClusterDomain, egressDenyCidrs } from "@testrun/kit/egress";
import { z } from "zod";

const origin = z.url().transform((url) => url.replace(/\/+$/, ""));
const positiveMs = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const flag = z
  .enum(["true", "false"])
  .default("false")
  .transform((value) => value === "true");

/** The automation service's environment (docs/automation.md). The Helm chart sets every variable without a default (test/chart.test.ts checks). */
export const configSchema = baseConfigSchema.extend({
  PORT: portVar(7107),
  METRICS_PORT: portVar(9467),
  DATABASE_URL: postgresUrl,
  /** The catalog, which authorizes actors (CheckAccess). */
  CATALOG_URL: serviceUrl.default("http://127.0.0.1:7102"),
  /** The runs service: StartRun for schedules, ListFinishedRuns for webhooks and badges. */
  RUNS_URL: serviceUrl.default("http://127.0.0.1:7104"),
  /** 32 random bytes, base64: the AES-256-GCM key of webhook signing secrets and URLs at rest. */
  WEBHOOK_SECRETS_KEY: z
    .string()
    .refine((text) => Buffer.from(text, "base64").length === 32, "must be 32 bytes, base64-encoded"),
  /** Where people open the console: badges' URLs (`{APP_URL}/badges/{token}.svg`). */
  APP_URL: origin.default("http://localhost:3000"),
  /** The REST API's public origin: the base of artifact urls in webhook payloads (as GET /v1/runs/:id). */
  API_URL: origin.default("http://localhost:8080"),
  /** How often each replica looks for due schedule ticks and pending deliveries. */
  TICK_INTERVAL_MS: positiveMs(1_000),
  /** How often the replica holding the cursor asks the runs service for newly finished runs. */
  FOLLOW_INTERVAL_MS: positiveMs(1_000),
  /** Days a finished delivery or schedule tick is kept (history.ts); pending ones are kept until done. */
  HISTORY_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /**
   * Delays before each retry of a failed delivery, comma-separated milliseconds; after the last,
   * the delivery is FAILED. Default 10 s, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h (about 21 hours).
   */
  WEBHOOK_RETRY_DELAYS_MS: z
    .string()
    .default("10000,60000,300000,1800000,7200000,21600000,43200000")
    .transform((text, ctx) => {
      const delays = text.split(",").map((part) => Number(part.trim()));
      if (delays.length === 0 || delays.some((d) => !Number.isInteger(d) || d <= 0)) {
        ctx.addIssue({ code: "custom", message: "must be positive integers, comma-separated" });
        return z.NEVER;
      }
      return delays;
    }),
  /** One delivery attempt's whole time: connect, send, answer (at most 64 KiB of it is read). */
  /** At most 30 s: a delivery claim lasts 60 s, and an attempt outliving it could be made twice. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().max(30_000).default(10_000),
  /**
   * Redeliver calls one member (or operator) makes per minute, and of one webhook's deliveries,
   * every caller together, on one replica: each sends a request now (redeliveries.ts).
   */
  REDELIVERIES_PER_MEMBER_PER_MINUTE: z.coerce.number().int().min(1).default(30),
  REDELIVERIES_PER_WEBHOOK_PER_MINUTE: z.coerce.number().int().min(1).default(20),
  /** Deliveries one replica attempts at once. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(8),
  /** Host names a Slack-kind webhook may post to. */
  SLACK_WEBHOOK_HOSTS: z
    .string()
    .default("hooks.slack.com")
    .transform((text) =>
      text
        .split(",")
        .map((host) => host.trim().toLowerCase())
        .filter(Boolean),
    ),
  /** "true": webhooks may use plain http URLs. For `make run` and tests with local receivers only, never production. */
  WEBHOOK_ALLOW_HTTP: flag,
  /** "true": cron expressions may have a seconds field (6 fields). For tests and benchmarks only. */
  SCHEDULE_ALLOW_SECONDS: flag,
  /** The executors' egress settings (docs/runs.md, "Egress"), applied to webhook URLs. */
  EGRESS_ALLOW_CIDRS: egressAllowCidrs,
  EGRESS_DENY_CIDRS: egressDenyCidrs,
  EGRESS_CLUSTER_DOMAIN: egressClusterDomain,
});

export type Config = z.infer<typeof configSchema>;
