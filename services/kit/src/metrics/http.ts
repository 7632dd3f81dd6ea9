import { httpDuration, httpRequests } from "./red.js";
import { recordingMetrics } from "./registry.js";

/** What the middleware reads of a Koa context (Koa's own, with @koa/router's matched layer). */
interface MeasuredContext {
  method: string;
  status: number;
  /** Set by @koa/router to the path template of the route that served the request. */
  _matchedRoute?: string | RegExp;
}

/** The route label of requests no router's route served (404s, files, probes of unknown paths). */
export const unmatchedRoute = "unmatched";

/** Methods kept as they are; any other (a client may send anything) is counted as `other`. */
const knownMethods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/**
 * RED metrics of a Koa app's requests, by route template (`/v1/runs/:runId`, never the path: ids
 * would make a series per run), method and status. Outermost, so that it sees the final status;
 * an error that escapes every other middleware is counted with its status (500 unless it says).
 * `routeOf` names requests outside the router (the console's Connect API) by a fixed template.
 */
export function httpMetricsMiddleware(
  routeOf?: (ctx: MeasuredContext & { path: string }) => string | undefined,
) {
  return async (ctx: MeasuredContext & { path: string }, next: () => Promise<unknown>): Promise<void> => {
    if (!recordingMetrics()) {
      await next();
      return;
    }
    const started = performance.now();
    let status: number | undefined;
    try {
      await next();
    } catch (error) {
      const raw = (error as { status?: unknown; statusCode?: unknown })?.status;
      status = typeof raw === "number" && raw >= 400 && raw < 600 ? raw : 500;
      throw error;
    } finally {
      const matched = ctx._matchedRoute;
      const route = routeOf?.(ctx) ?? (typeof matched === "string" ? matched : unmatchedRoute);
      const method = knownMethods.has(ctx.method) ? ctx.method : "other";
      httpRequests.inc({ route, method, status: String(status ?? ctx.status) });
      httpDuration.observe({ route, method }, (performance.now() - started) / 1000);
    }
  };
}
