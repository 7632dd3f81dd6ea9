import { randomUUID } from "node:crypto";
import type Router from "@koa/router";
import { type Logger, probePaths, withoutKeys } from "@testrun/kit";
import type Koa from "koa";
import type { GatewayState } from "./context.js";
import { type ErrorBody, HttpError, internalError } from "./http-error.js";
import { countRefusal } from "./metrics.js";

/** An incoming X-Request-Id we pass on: short, and only characters that are safe in logs and headers. */
const saneRequestId = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * The outermost middleware: gives every request an id (X-Request-Id, taken from the client when
 * sane, else generated) and a logger carrying it; turns every error into the `{ error, code }`
 * body; answers unknown paths with 404 and known paths with a wrong method (OPTIONS included)
 * with 405 and Allow; writes one log line per request (the probes' at debug: the kubelet asks them
 * every few seconds, and they would bury the API's requests).
 *
 * Also fixes the request's public origin (`state.origin`), the base of the urls it answers with.
 *
 * Nothing here ever logs a header or the query: the key travels in headers. The path is logged and
 * echoed in 404/405 errors with anything shaped like a key replaced, as a key pasted in place of a
 * run id would otherwise be kept in the logs.
 */
export function requestContext(
  logger: Logger,
  router: Router<GatewayState>,
  apiUrl?: string,
): Koa.Middleware<GatewayState> {
  return async (ctx, next) => {
    const started = performance.now();
    // Behind trusted proxies (app.proxy) Koa reads X-Forwarded-Proto and -Host here.
    ctx.state.origin = apiUrl ?? `${ctx.protocol}://${ctx.host || "localhost"}`;
    const incoming = ctx.get("X-Request-Id");
    const requestId = saneRequestId.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    // Made when first used (most requests log only their closing line, below): a pino child costs.
    let log: Logger | undefined;
    Object.defineProperty(ctx.state, "log", {
      get: () => {
        log ??= logger.child({ requestId });
        return log;
      },
      configurable: true,
    });
    ctx.set("X-Request-Id", requestId);
    // Answers are per key and may change any moment: no cache may keep them.
    ctx.set("Cache-Control", "no-store");

    try {
      await next();
      if (ctx.status === 404 && ctx.body == null) throw notRouted(router, ctx.path, ctx.method);
    } catch (error) {
      const known = error instanceof HttpError ? error : undefined;
      if (!known) ctx.state.log.error({ err: error }, "request failed");
      const answer = known ?? internalError();
      countRefusal(answer);
      ctx.status = answer.status;
      for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
      const body: ErrorBody = { error: answer.message, code: answer.code, ...answer.extra };
      ctx.body = body;
    }
    // The service answers no CORS requests (docs/rest-api.md): whatever a middleware did, no
    // Access-Control-* header leaves.
    for (const name of Object.keys(ctx.response.headers)) {
      if (name.toLowerCase().startsWith("access-control-")) ctx.remove(name);
    }

    const key = ctx.state.key;
    const probe = probePaths.has(ctx.path) && ctx.status < 500;
    (log ?? logger)[probe ? "debug" : "info"](
      {
        ...(!log && { requestId }),
        method: ctx.method,
        path: withoutKeys(ctx.path),
        status: ctx.status,
        ms: Math.round(performance.now() - started),
        ip: ctx.ip,
        ...(key && { keyId: key.keyId, projectId: key.projectId }),
      },
      "request",
    );
  };
}

/** 405 with Allow when some route serves the path with other methods, else 404. */
function notRouted(router: Router<GatewayState>, path: string, method: string): HttpError {
  const allowed = new Set(router.match(path, method).path.flatMap((layer) => layer.methods));
  const shown = withoutKeys(path);
  if (allowed.size === 0) return new HttpError(404, "not_found", `no such path: ${shown}`);
  const allow = [...allowed].join(", ");
  return new HttpError(
    405,
    "method_not_allowed",
    `${method} is not allowed on ${shown}; allowed: ${allow}`,
    {},
    { Allow: allow },
  );
}
