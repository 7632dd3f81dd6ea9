import { hostname } from "node:os";
import { baseConfigSchema, portVar, redisUrl, serviceUrl, type TestKind, testKinds } from "@testrun/kit";
import { egressAllowCidrs, egressClusterDomain, egressDenyCidrs } from "@testrun/kit/egress";
import { z } from "zod";

/**
 * The executor's environment. The Helm chart sets every variable without a default (test/chart.test.ts
 * checks). No SERVICE_TOKEN: executors run steps against environments we do not control, so they
 * hold only EXECUTOR_TOKEN, which opens the few methods executors need and nothing else.
 */
export const configSchema = baseConfigSchema.omit({ SERVICE_TOKEN: true }).extend({
  PORT: portVar(7105),
  // GET /metrics for Prometheus (docs/operations.md, "Metrics"); 0 turns it off.
  METRICS_PORT: portVar(9465),
  REDIS_URL: redisUrl,
  /** The executor identity: the runs service and GetVariableValues accept only this token. */
  EXECUTOR_TOKEN: z.string().min(32, "must be at least 32 characters"),
  RUNS_URL: serviceUrl.default("http://127.0.0.1:7104"),
  CATALOG_URL: serviceUrl.default("http://127.0.0.1:7102"),
  /** Tests this process runs at the same time. */
  CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  /**
   * The runs service's lease (its default: 30 s). Heartbeats go every third of it; queue entries
   * unacknowledged for longer are taken over from their (presumably dead) executor.
   */
  LEASE_MS: z.coerce.number().int().min(300).default(30_000),
  /** How long the pre-run check of an environment's base URL waits for any answer. */
  REACHABILITY_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
  /**
   * How much of a step's response body is read: the rest is discarded and the connection closed.
   * Checks on a longer body say they saw only its beginning; JSON checks on it fail.
   */
  RESPONSE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  /**
   * A test's overall deadline, besides its steps' own timeouts: past it, the test fails (and is
   * reported as such, its lease released by the completion).
   */
  TEST_DEADLINE_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(10 * 60_000),
  /**
   * Exceptions to the built-in egress blocks (loopback, link-local, cloud metadata, ...), e.g.
   * 127.0.0.0/8 where tests run against local servers. Never an exception to EGRESS_DENY_CIDRS;
   * no IPv6 form of IPv4 addresses, nothing wider than /8 (IPv4) or /16 (IPv6).
   */
  EGRESS_ALLOW_CIDRS: egressAllowCidrs,
  /** Ranges refused on top of the built-in blocks: the chart puts the cluster's pods and services here. */
  EGRESS_DENY_CIDRS: egressDenyCidrs,
  /** The cluster's DNS domain: host names under it (and `.svc`, single labels) are refused. */
  EGRESS_CLUSTER_DOMAIN: egressClusterDomain,
  /** "true": steps may name cluster services (`redis`, `<svc>.<ns>.svc`); their addresses are still checked. */
  EGRESS_ALLOW_CLUSTER_NAMES: z
    .enum(["true", "false"])
    .default("false")
    .transform((value) => value === "true"),
  /** The Chromium binary browser steps drive (Debian's package; launched at the first browser step). */
  CHROMIUM_PATH: z.string().min(1).default("/usr/bin/chromium"),
  /**
   * Browser contexts open at once in this process: browser tests running together (each has its own
   * context; a test waits for one under its deadline). Each costs Chromium renderer memory
   * (docs/runs.md, "Browser steps"); tests without browser steps do not count.
   */
  BROWSER_CONTEXTS: z.coerce.number().int().min(1).max(32).default(2),
  /**
   * Browser processes at once (default: BROWSER_CONTEXTS). A browser serves one project at a time
   * (docs/security.md, "The browser's sandbox"): this many projects' browser tests run at once;
   * tests of one project share its browser. Each costs a browser process's memory besides its
   * renderers' (docs/runs.md, "Browser steps").
   */
  BROWSER_PROCESSES: z.coerce.number().int().min(1).max(32).optional(),
  /**
   * Chromium's own sandbox: `on` (the default) or `off`, which launches it with --no-sandbox, only
   * for platforms that refuse user namespaces (warned at start; docs/deploy.md says what a pod needs).
   */
  BROWSER_SANDBOX: z.enum(["on", "off"]).default("on"),
  /**
   * Playwright spec cases: `sandboxed` (the default) runs each in the user-code sandbox
   * (docs/security.md, "User code: Playwright specs"), which needs an executor running as root on
   * Linux: elsewhere a spec test fails saying so. `off` fails each spec test saying this executor
   * does not run them; `unsandboxed` runs them in a plain child process as the executor's user (a
   * spec could then read what that user can, its token in /proc): for a single trusted team's
   * installation only, warned at start.
   */
  PLAYWRIGHT_SPECS: z.enum(["sandboxed", "off", "unsandboxed"]).default("sandboxed"),
  /** The user and group chromium runs as when the executor runs as root (65534: nobody); never root. */
  BROWSER_UID: z.coerce.number().int().min(1).max(4_294_967_294).default(65534),
  BROWSER_GID: z.coerce.number().int().min(1).max(4_294_967_294).default(65534),
  /**
   * The largest Playwright trace kept, zipped (as recorded, and again once redacted); it may unzip
   * to 4 times as much. A larger trace is not kept and the browser log says so.
   */
  BROWSER_TRACE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024 * 1024)
    .max(256 * 1024 * 1024)
    .default(32 * 1024 * 1024),
  /**
   * The tests this executor takes, by kind: `http` (tests of HTTP steps only), `browser` (tests
   * with a browser step), `spec` (Playwright specs: the user-code sandbox, docs/security.md), a
   * comma-separated list of them (`browser,spec`), or `all`. Separate pools (the chart's
   * components.executor.pools) keep quick API tests from queueing behind browser tests, and can
   * give specs executors of their own.
   */
  EXECUTOR_STEP_KINDS: z
    .string()
    .default("all")
    .transform((value, context): TestKind[] => {
      if (value.trim() === "all") return [...testKinds];
      const kinds = value.split(",").map((kind) => kind.trim());
      const unknown = kinds.filter((kind) => !(testKinds as readonly string[]).includes(kind));
      if (kinds.length > 0 && unknown.length === 0) return [...new Set(kinds as TestKind[])];
      context.addIssue({
        code: "custom",
        message: `must be all, or kinds among ${testKinds.join(", ")} separated by commas (not ${JSON.stringify(value)})`,
      });
      return z.NEVER;
    }),
  /** This process's name in the consumer group and in claims: the pod name in Kubernetes. */
  EXECUTOR_NAME: z.string().min(1).max(150).default(hostname()),
});

export type Config = z.infer<typeof configSchema>;
