import type { DescService } from "@bufbuild/protobuf";
import { createContextValues, type ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import Router from "@koa/router";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import {
  callLoggingInterceptor,
  type Logger,
  probeRoutes,
  serverTracingInterceptor,
  serviceReadMaxBytes,
  withoutKeys,
} from "@testrun/kit";
import Koa from "koa";
import { consoleRequestGate } from "../rpc/session-gate.js";
import { sessionCookieKey } from "../viewer.js";
import { webApp } from "./assets.js";
import { type AuthDeps, authRoutes } from "./auth-routes.js";
import { sameOriginWrites, securityHeaders } from "./security.js";

/** The browser's Connect API lives under this prefix: /api/testrun.console.v1.ConsoleService/<Method>. */
export const apiPrefix = "/api";

/**
 * The largest request message the browser API reads (connect's `readMaxBytes`, 4 GiB by default).
 * The console's largest requests are test cases written in the editor, which measures them against
 * this bound before sending (web/src/editor/useSaveTestCase.ts; docs/security.md, "Resource limits").
 * ImportContent alone reads more (importReadMaxBytes).
 */
export const apiReadMaxBytes = 1024 * 1024;

/**
 * What ImportContent reads: a content document's items, as much as the catalog takes in one call
 * (8 MiB; the web app sends them in binary, the catalog's encoding, and checks the size first).
 */
export const importReadMaxBytes = serviceReadMaxBytes;

export interface ConsoleAppOptions extends AuthDeps {
  appUrl: string;
  logger: Logger;
  isReady: () => boolean;
  consoleService: Partial<ServiceImpl<typeof ConsoleService>>;
  /** Folder of the built web app. */
  webRoot: string;
  /** Aborted when the console shuts down: ends live streams (run pages) so the server can close. */
  shutdownSignal?: AbortSignal;
}

/**
 * The console's HTTP/1.1 server: security headers and the same-origin rule on every request, then
 * probes, sign-in routes, the Connect API for the browser, and the web app's files.
 */
export function createConsoleApp(options: ConsoleAppOptions): Koa {
  const app = new Koa();
  const { cookies, logger } = options;

  const router = new Router();
  probeRoutes(router, options.isReady);
  authRoutes(router, options);

  // The session id travels from the cookie to the handlers as a context value, never as an argument.
  const api = connectNodeAdapter({
    routes: (r) => {
      r.service(ConsoleService as DescService, options.consoleService);
      // Registered again with its own bound: the later registration of a path is the one served.
      const importContent = options.consoleService.importContent;
      if (importContent)
        r.rpc(ConsoleService.method.importContent, importContent, { readMaxBytes: importReadMaxBytes });
    },
    requestPathPrefix: apiPrefix,
    readMaxBytes: apiReadMaxBytes,
    // Browsers (connect-web) never compress what they send: nothing is inflated here (the gate
    // refuses a compressed request before its body is read).
    acceptCompression: [],
    requestGate: consoleRequestGate,
    ...(options.shutdownSignal && { shutdownSignal: options.shutdownSignal }),
    interceptors: [serverTracingInterceptor, callLoggingInterceptor(logger)],
    contextValues: (req) =>
      createContextValues().set(sessionCookieKey, cookies.read(req.headers.cookie, cookies.sessionName)),
  });

  app.use(securityHeaders(options.appUrl));
  app.use(async (ctx, next) => {
    const started = performance.now();
    await next();
    // The path only: a query can hold an authorization code.
    if (!ctx.path.startsWith(apiPrefix) && ctx.path !== "/healthz" && ctx.path !== "/readyz")
      logger.debug(
        {
          method: ctx.method,
          path: withoutKeys(ctx.path),
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
    await new Promise<void>((resolve) => {
      ctx.res.once("close", resolve);
      api(ctx.req, ctx.res);
    });
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  for (const middleware of webApp(options.webRoot)) app.use(middleware);
  return app;
}
