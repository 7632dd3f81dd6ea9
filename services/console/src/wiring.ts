import { fileURLToPath } from "node:url";
import type { Client } from "@connectrpc/connect";
import type { AutomationService } from "@testrun/gen/testrun/automation/v1/automation_pb";
import type { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleAdminService } from "@testrun/gen/testrun/console/v1/console_pb";
import type { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import type { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { bind, type Logger, type Orm, type ServiceWiring, startLoop } from "@testrun/kit";
import type Koa from "koa";
import { OidcSignIn } from "./auth/oidc.js";
import { OidcBindings } from "./auth/oidc-bindings.js";
import { SessionStore } from "./auth/sessions.js";
import { SignInLinks } from "./auth/sign-in-links.js";
import type { Config } from "./config.js";
import { Directory } from "./directory.js";
import { createConsoleApp } from "./http/app.js";
import { AuthAttempts } from "./http/auth-limit.js";
import { ConsoleCookies } from "./http/cookies.js";
import { adminService } from "./rpc/admin-service.js";
import { consoleService } from "./rpc/console-service.js";
import { StreamSlots } from "./rpc/stream-slots.js";
import { Viewers } from "./viewer.js";

export { configSchema } from "./config.js";
export { database } from "./db/index.js";

/** The built web app: services/console/web-build, beside src/ (from source) and dist/ (built). */
const webRoot = fileURLToPath(new URL("../web-build/", import.meta.url));
/** Ended sessions, used links and abandoned sign-ins are deleted this often. */
const sweepEveryMs = 10 * 60_000;

/** What the console is made of: its configuration, database, log, readiness and the services it acts through. */
export interface ConsoleDependencies {
  config: Config;
  orm: Orm;
  logger: Logger;
  /** False once the process is shutting down (`runService`). */
  isReady(): boolean;
  catalog: Client<typeof CatalogService>;
  keys: Client<typeof KeysService>;
  runs: Client<typeof RunsService>;
  billing: Client<typeof BillingService>;
  automation: Client<typeof AutomationService>;
}

/** The console's HTTP application (the web app, its Connect API, sign-in, badges) and its admin RPC. */
export interface ConsoleWiring extends ServiceWiring {
  /** The Koa application main.ts serves on HTTP_PORT. */
  app: Koa;
  /** WatchRun streams open now (the process's gauge). */
  openStreams(): number;
  /** Ends every live stream at once (browsers reopen them on another replica). */
  endStreams(): void;
}

/**
 * The console's wiring, for main.ts and tests alike: sessions and sign-in links in its database,
 * OpenID Connect when configured, the browser's Connect API acting for the signed-in member through
 * the other services, and the sweeper of ended sessions it starts at once (`stop` ends it).
 */
export function wireConsole({
  config,
  orm,
  logger,
  isReady,
  catalog,
  keys,
  runs,
  billing,
  automation,
}: ConsoleDependencies): ConsoleWiring {
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

  const sweeper = startLoop({
    name: "session sweep",
    intervalMs: sweepEveryMs,
    firstAfterMs: sweepEveryMs,
    pass: () => sessions.sweep(),
    logger,
  });

  const streamsEnd = new AbortController();
  const streams = new StreamSlots({
    perSession: config.WATCH_STREAMS_PER_SESSION,
    perProject: config.WATCH_STREAMS_PER_PROJECT,
  });
  const viewers = new Viewers(sessions, directory);
  const app = createConsoleApp({
    shutdownSignal: streamsEnd.signal,
    trustProxyHops: config.TRUST_PROXY_HOPS,
    writeStallMs: config.WRITE_STALL_SECONDS * 1000,
    appUrl: config.APP_URL,
    logger,
    isReady,
    sessions,
    links,
    directory,
    cookies: new ConsoleCookies(config.APP_URL),
    authAttempts: new AuthAttempts(
      config.AUTH_REQUESTS_PER_MINUTE,
      config.AUTH_REQUESTS_PER_CLIENT_PER_MINUTE,
    ),
    ...(oidc && bindings && { oidc, bindings }),
    webRoot,
    viewers,
    runs,
    automation,
    badgeRequests: new AuthAttempts(
      config.BADGE_REQUESTS_PER_MINUTE,
      config.BADGE_REQUESTS_PER_CLIENT_PER_MINUTE,
    ),
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
      operatorContact: config.OPERATOR_CONTACT ?? "",
      ...(oidc && bindings && { oidcProvider: oidc.providerName, bindings }),
    }),
  });
  return {
    app,
    services: [bind(ConsoleAdminService, adminService({ links, directory, appUrl: config.APP_URL }))],
    openStreams: () => streams.open,
    endStreams: () => streamsEnd.abort(),
    async stop() {
      await sweeper.stop();
    },
  };
}
