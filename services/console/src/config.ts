import { baseConfigSchema, httpLimitsConfig, portVar, postgresUrl, serviceUrl } from "@testrun/kit";
import { z } from "zod";

const positiveInt = (defaultValue: number) => z.coerce.number().int().positive().default(defaultValue);
/** An absolute http(s) origin without a path, query or trailing slash. */
const origin = z
  .string()
  .regex(/^https?:\/\/[^/?#]+$/, "must be like https://host[:port], without a path or trailing slash");

/** The console's environment. The Helm chart sets every variable without a default (test/chart.test.ts checks). */
export const configSchema = baseConfigSchema
  .extend({
    // PORT serves gRPC (health, ConsoleAdminService for testrunctl); HTTP_PORT serves browsers.
    PORT: portVar(7106),
    // GET /metrics for Prometheus (docs/operations.md, "Metrics"); 0 turns it off.
    METRICS_PORT: portVar(9466),
    HTTP_PORT: portVar(3000),
    // The HTTP port's connection cap and timeouts (kit config.ts; docs/security.md, "Resource limits").
    ...httpLimitsConfig,
    DATABASE_URL: postgresUrl,
    KEYS_URL: serviceUrl.default("http://127.0.0.1:7101"),
    CATALOG_URL: serviceUrl.default("http://127.0.0.1:7102"),
    BILLING_URL: serviceUrl.default("http://127.0.0.1:7103"),
    RUNS_URL: serviceUrl.default("http://127.0.0.1:7104"),
    AUTOMATION_URL: serviceUrl.default("http://127.0.0.1:7107"),
    /**
     * The address people open the console at (the runs service's APP_URL): the origin that
     * state-changing calls must come from, the base of sign-in links and of the OIDC redirect,
     * and whether cookies are Secure (https).
     */
    APP_URL: origin.default("http://localhost:3000"),
    /** The REST API's base address, shown in the console's curl examples. */
    API_URL: origin.default("http://localhost:8080"),
    /**
     * Who grants credits here (operators, with `testrunctl credits grant`), in the operators' own
     * words ("the platform team, #testrun on Slack"): the console names them where a balance is
     * short. Unset: it says only "an operator of this Testrun installation".
     */
    OPERATOR_CONTACT: z.string().trim().min(1).max(200).optional(),
    /** A session ends after this long without a call… */
    SESSION_IDLE_MINUTES: positiveInt(12 * 60),
    /** …and this long after sign-in at the latest. */
    SESSION_MAX_HOURS: positiveInt(7 * 24),
    /** OpenID Connect sign-in: all three, or none (sign-in links only). */
    OIDC_ISSUER_URL: z.url({ protocol: /^https?$/ }).optional(),
    OIDC_CLIENT_ID: z.string().min(1).optional(),
    OIDC_CLIENT_SECRET: z.string().min(1).optional(),
    /** Deadline of every call the console makes to the other services (live run streams excepted). */
    RPC_TIMEOUT_MS: positiveInt(5_000),
    /**
     * A run page's live stream ends after this long and the browser opens the next one: below the
     * 60 s idle timeout of common proxies, and the session is checked again each time.
     */
    WATCH_WINDOW_SECONDS: positiveInt(50),
    /**
     * How long a write of an API response may wait for the browser to read what was sent before
     * (a WatchRun stream of a tab that stopped reading): past it the response ends, its connection
     * closes and its stream's slot is free (http/write-stall.ts). A write is one message whole: a
     * run's first message can be 1 MB, which a 40 KB/s link takes 25 s to accept.
     */
    WRITE_STALL_SECONDS: positiveInt(30),
    /**
     * Live run streams one session may hold at once on one replica; beyond, RESOURCE_EXHAUSTED and
     * the run page reads the run every few seconds instead.
     */
    WATCH_STREAMS_PER_SESSION: positiveInt(20),
    /** Live run streams the sessions of one project may hold at once on one replica, together. */
    WATCH_STREAMS_PER_PROJECT: positiveInt(200),
    /**
     * Anonymous sign-in requests (link preview and use, OpenID start and callback) one replica
     * answers per minute, all clients together; beyond, 429 with Retry-After (http/auth-limit.ts).
     */
    AUTH_REQUESTS_PER_MINUTE: positiveInt(600),
    /**
     * Public badge requests (GET /badges/{token}.svg, no session) one replica answers per minute,
     * all clients together; beyond, 429 with the unknown badge (http/badges.ts).
     */
    BADGE_REQUESTS_PER_MINUTE: positiveInt(6000),
    /**
     * Of those, what one client address (an IPv4 address, an IPv6 /64) gets per minute, so that one
     * client cannot use up the replica's bound for everyone (http/auth-limit.ts). Sign-in takes a
     * few requests per person; an office behind one NAT shares its address. Badges are fetched by
     * image proxies (GitHub's camo) for every reader of a README, so theirs is larger.
     */
    AUTH_REQUESTS_PER_CLIENT_PER_MINUTE: positiveInt(60),
    BADGE_REQUESTS_PER_CLIENT_PER_MINUTE: positiveInt(1200),
    /**
     * How many reverse proxies in front of the console append to X-Forwarded-For: the client
     * address of the per-client bounds above is the one this many hops back. 0 (the default)
     * ignores the header and uses the connection's address: believed without a proxy in front, it
     * would let a client pick a new address for every request. Behind the chart's ingress, 1.
     */
    TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  })
  .refine(
    (c) =>
      [c.OIDC_ISSUER_URL, c.OIDC_CLIENT_ID, c.OIDC_CLIENT_SECRET].every((v) => v === undefined) ||
      [c.OIDC_ISSUER_URL, c.OIDC_CLIENT_ID, c.OIDC_CLIENT_SECRET].every((v) => v !== undefined),
    {
      message: "set all of OIDC_ISSUER_URL, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET, or none",
      path: ["OIDC_ISSUER_URL"],
    },
  );

export type Config = z.infer<typeof configSchema>;
