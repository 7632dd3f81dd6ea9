import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { type Client, createContextValues, type MethodImpl, type ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import Router from "@koa/router";
import type { AutomationService } from "@testrun/gen/testrun/automation/v1/automation_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import type { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  callLoggingInterceptor,
  httpMetricsMiddleware,
  type Logger,
  probeRoutes,
  recordRpc,
  rpcMetricsInterceptor,
  serverTracingInterceptor,
  serviceReadMaxBytes,
  withoutKeys,
} from "@testrun/kit";
import Koa from "koa";
import { countRefusal, refusalsInterceptor } from "../metrics.js";
import { consoleRequestGate, methodsWithoutSession } from "../rpc/session-gate.js";
import { sessionCookieKey, type Viewers } from "../viewer.js";
import { artifactRoutes } from "./artifacts.js";
import { webApp } from "./assets.js";
import type { AuthAttempts } from "./auth-limit.js";
import { type AuthDeps, authRoutes } from "./auth-routes.js";
import { badgeRoutes, loggedBadgePath } from "./badges.js";
import { sameOriginWrites, securityHeaders } from "./security.js";
import { traceViewer, traceViewerRoot } from "./trace-viewer.js";
import { endStalledWrites } from "./write-stall.js";

/** WRITE_STALL_SECONDS's default, in ms: see ConsoleAppOptions.writeStallMs. */
export const defaultWriteStallMs = 30_000;

/** The browser's Connect API lives under this prefix: /api/testrun.console.v1.ConsoleService/<Method>. */
export const apiPrefix = "/api";

/**
 * The largest request message the browser API reads (connect's `readMaxBytes`, 4 GiB by default),
 * for every method but those of catalogBoundMethods (docs/security.md, "Resource limits").
 */
export const apiReadMaxBytes = 1024 * 1024;

/**
 * What the methods that carry test cases whole read: as much as the catalog takes in one call
 * (8 MiB). The web app sends them in binary, the catalog's encoding, and checks the size first
 * (web/src/catalog-bound.ts: the editor's saves and the import dialog).
 */
export const catalogReadMaxBytes = serviceReadMaxBytes;

/**
 * The methods that read up to catalogReadMaxBytes: a test case may hold 1 MiB of body per step, so
 * the editor's saves and an import are as large as the catalog allows, not the API's 1 MiB.
 */
export const catalogBoundMethods = ["importContent", "createTestCase", "updateTestCase"] as const;

/**
 * What the methods answering without a session (methodsWithoutSession) read: their requests are
 * empty messages (`{}`), so anyone without a session gets no more than this read and parsed.
 */
export const anonymousReadMaxBytes = 1024;

export interface ConsoleAppOptions extends AuthDeps {
  appUrl: string;
  logger: Logger;
  isReady: () => boolean;
  consoleService: Partial<ServiceImpl<typeof ConsoleService>>;
  /** Folder of the built web app. */
  webRoot: string;
  /** Who a session cookie is, for the routes outside the Connect API (artifacts). */
  viewers: Viewers;
  /** Where artifacts are read (GetArtifact, with the member as actor). */
  runs: Client<typeof RunsService>;
  /** Where the public badge route reads a badge's state (GetBadgeState, by its token alone). */
  automation: Client<typeof AutomationService>;
  /** The bound on anonymous badge requests (BADGE_REQUESTS_PER_MINUTE). */
  badgeRequests: AuthAttempts;
  /**
   * How long a write of an API response (a WatchRun stream's above all) may wait for the client to
   * read before the response is ended and its stream's slot freed (WRITE_STALL_SECONDS).
   */
  writeStallMs?: number;
  /** Reverse proxies in front that append to X-Forwarded-For (TRUST_PROXY_HOPS); 0 believes none. */
  trustProxyHops?: number;
  /** Aborted when the console shuts down: ends live streams (run pages) so the server can close. */
  shutdownSignal?: AbortSignal;
}

/**
 * The console's HTTP/1.1 server: security headers and the same-origin rule on every request, then
 * probes, sign-in routes, the Connect API for the browser, artifacts, public status badges, the
 * Playwright trace viewer
 * (with a policy of its own, for its files only) and the web app's files.
 */
export function createConsoleApp(options: ConsoleAppOptions): Koa {
  const app = new Koa();
  // ctx.ip, the address the anonymous bounds count by (auth-limit.ts): the connection's, or the one
  // this many proxies back in X-Forwarded-For. The console reads no ctx.host or ctx.protocol, so
  // app.proxy changes nothing else here.
  app.proxy = (options.trustProxyHops ?? 0) > 0;
  app.maxIpsCount = options.trustProxyHops ?? 0;
  const { cookies, logger } = options;

  const router = new Router();
  probeRoutes(router, options.isReady);
  authRoutes(router, options);
  artifactRoutes(router, options);
  badgeRoutes(router, options);

  // The session id travels from the cookie to the handlers as a context value, never as an argument.
  const api = connectNodeAdapter({
    routes: (r) => {
      r.service(ConsoleService as DescService, options.consoleService);
      // Registered again with their own bound: the later registration of a path is the one served.
      // The request gate still runs first, so nothing is read without a session but the requests of
      // the methods answering without one, each within anonymousReadMaxBytes.
      for (const method of ConsoleService.methods)
        if (methodsWithoutSession.has(method.name)) {
          const impl = options.consoleService[method.localName as keyof typeof options.consoleService];
          if (impl)
            r.rpc(method as DescMethod, impl as MethodImpl<DescMethod>, {
              readMaxBytes: anonymousReadMaxBytes,
            });
        }
      for (const name of catalogBoundMethods) {
        const impl = options.consoleService[name];
        if (impl)
          r.rpc(ConsoleService.method[name], impl as MethodImpl<DescMethod>, {
            readMaxBytes: catalogReadMaxBytes,
          });
      }
    },
    requestPathPrefix: apiPrefix,
    readMaxBytes: apiReadMaxBytes,
    // Browsers (connect-web) never compress what they send: nothing is inflated here (the gate
    // refuses a compressed request before its body is read).
    acceptCompression: [],
    requestGate: async (context) => {
      const started = performance.now();
      try {
        await consoleRequestGate(context, options.viewers);
      } catch (error) {
        // Refused before any interceptor runs: counted here as they would count it.
        recordRpc(context.service.typeName, context.method.name, started, error);
        countRefusal(error);
        throw error;
      }
    },
    ...(options.shutdownSignal && { shutdownSignal: options.shutdownSignal }),
    interceptors: [
      rpcMetricsInterceptor,
      refusalsInterceptor,
      serverTracingInterceptor,
      callLoggingInterceptor(logger),
    ],
    contextValues: (req) =>
      createContextValues().set(sessionCookieKey, cookies.read(req.headers.cookie, cookies.sessionName)),
  });

  // Outermost: every request with the status the browser got. The Connect API is one template
  // here (its methods are counted as RPCs), never its paths: anyone may send any path under /api.
  const apiRoute = `${apiPrefix}/{*rpc}`;
  app.use(httpMetricsMiddleware((ctx) => (ctx.path.startsWith(`${apiPrefix}/`) ? apiRoute : undefined)));
  app.use(securityHeaders(options.appUrl));
  app.use(async (ctx, next) => {
    const started = performance.now();
    await next();
    // The path only: a query can hold an authorization code.
    if (!ctx.path.startsWith(apiPrefix) && ctx.path !== "/healthz" && ctx.path !== "/readyz")
      logger.debug(
        {
          method: ctx.method,
          path: withoutKeys(loggedBadgePath(ctx.path)),
          status: ctx.status,
          ms: Math.round(performance.now() - started),
        },
        "http",
      );
  });
  app.use(sameOriginWrites(options.appUrl));
  app.use(async (ctx, next) => {
    if (!ctx.path.startsWith(`${apiPrefix}/`)) return next();
    ctx.respond = false;
    // Every answer is the signed-in member's and may change any moment. Connect serves reads
    // (methods without side effects) over GET too, which a browser or proxy would otherwise keep.
    ctx.res.setHeader("Cache-Control", "no-store");
    // A live stream's messages must not wait in a proxy's buffer (nginx honours this header).
    if (ctx.path.endsWith("/WatchRun")) ctx.res.setHeader("X-Accel-Buffering", "no");
    endStalledWrites(ctx.res, options.writeStallMs ?? defaultWriteStallMs);
    await new Promise<void>((resolve) => {
      ctx.res.once("close", resolve);
      api(ctx.req, ctx.res);
    });
  });
  app.use(traceViewer(traceViewerRoot()));
  app.use(router.routes());
  app.use(router.allowedMethods());
  for (const middleware of webApp(options.webRoot)) app.use(middleware);
  return app;
}
