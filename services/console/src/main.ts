import { fileURLToPath } from "node:url";
import { AutomationService } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleAdminService } from "@testrun/gen/testrun/console/v1/console_pb";
import { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { bind, runService, serveHttp, serviceClient } from "@testrun/kit";
import { OidcSignIn } from "./auth/oidc.js";
import { OidcBindings } from "./auth/oidc-bindings.js";
import { SessionStore } from "./auth/sessions.js";
import { SignInLinks } from "./auth/sign-in-links.js";
import { configSchema } from "./config.js";
import { database } from "./db/index.js";
import { Directory } from "./directory.js";
import { createConsoleApp } from "./http/app.js";
import { AuthAttempts } from "./http/auth-limit.js";
import { ConsoleCookies } from "./http/cookies.js";
import { registerWatchStreamsGauge } from "./metrics.js";
import { adminService } from "./rpc/admin-service.js";
import { consoleService } from "./rpc/console-service.js";
import { StreamSlots } from "./rpc/stream-slots.js";
import { Viewers } from "./viewer.js";

/** The built web app: services/console/web-build, beside src/ (from source) and dist/ (built). */
const webRoot = fileURLToPath(new URL("../web-build/", import.meta.url));
/** Ended sessions, used links and abandoned sign-ins are deleted this often. */
const sweepEveryMs = 10 * 60_000;

await runService({
  name: "console",
  config: configSchema,
  database,
  async setup({ config, logger, orm, onShutdown, onStopping, isReady }) {
    const clientOptions = { token: config.SERVICE_TOKEN, timeoutMs: config.RPC_TIMEOUT_MS };
    const catalog = serviceClient(CatalogService, config.CATALOG_URL, clientOptions);
    const keys = serviceClient(KeysService, config.KEYS_URL, clientOptions);
    const runs = serviceClient(RunsService, config.RUNS_URL, clientOptions);
    const billing = serviceClient(BillingService, config.BILLING_URL, clientOptions);
    const automation = serviceClient(AutomationService, config.AUTOMATION_URL, clientOptions);

    const sessions = new SessionStore(orm, {
      idleMs: config.SESSION_IDLE_MINUTES * 60_000,
      maxMs: config.SESSION_MAX_HOURS * 3_600_000,
    });
    const links = new SignInLinks(orm);
    const directory = new Directory(catalog);
    const { OIDC_ISSUER_URL: issuerUrl, OIDC_CLIENT_ID: clientId, OIDC_CLIENT_SECRET: clientSecret } = config;
    const oidc =
      issuerUrl && clientId && clientSecret
        ? new OidcSignIn({ issuerUrl, clientId, clientSecret, appUrl: config.APP_URL }, logger)
        : undefined;

    const bindings = oidc && new OidcBindings(orm, directory);

    const sweeper = setInterval(() => {
      sessions.sweep().catch((err: unknown) => logger.warn({ err }, "session sweep failed"));
    }, sweepEveryMs);
    sweeper.unref();
    onShutdown(() => clearInterval(sweeper));

    const streamsEnd = new AbortController();
    const streams = new StreamSlots({
      perSession: config.WATCH_STREAMS_PER_SESSION,
      perProject: config.WATCH_STREAMS_PER_PROJECT,
    });
    registerWatchStreamsGauge(() => streams.open);
    const viewers = new Viewers(sessions, directory);
    const app = createConsoleApp({
      shutdownSignal: streamsEnd.signal,
      appUrl: config.APP_URL,
      logger,
      isReady,
      sessions,
      links,
      directory,
      cookies: new ConsoleCookies(config.APP_URL),
      authAttempts: new AuthAttempts(config.AUTH_REQUESTS_PER_MINUTE),
      ...(oidc && bindings && { oidc, bindings }),
      webRoot,
      viewers,
      runs,
      automation,
      badgeRequests: new AuthAttempts(config.BADGE_REQUESTS_PER_MINUTE),
      consoleService: consoleService({
        viewers,
        sessions,
        catalog,
        keys,
        runs,
        billing,
        automation,
        watchWindowMs: config.WATCH_WINDOW_SECONDS * 1000,
        streams,
        apiUrl: config.API_URL,
        ...(oidc && bindings && { oidcProvider: oidc.providerName, bindings }),
      }),
    });
    await serveHttp(app, {
      port: config.HTTP_PORT,
      host: config.HOST,
      logger,
      shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
      onShutdown,
    });
    // At SIGTERM, live streams end at once (browsers reopen them on another replica), so they
    // never hold the drain open.
    onStopping(() => streamsEnd.abort());
    return [bind(ConsoleAdminService, adminService({ links, directory, appUrl: config.APP_URL }))];
  },
});
