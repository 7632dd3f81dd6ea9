import Router from "@koa/router";
import Koa from "koa";

/** The error body of every failed request (decisions.md, "Errors"). */
export interface ErrorBody {
  error: string;
  code: string;
  [extra: string]: unknown;
}

/** An error the gateway answers with deliberately: its status, code and message reach the client. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/**
 * The /v1 HTTP application. Every response is JSON; every error has the shape
 * `{ error, code }`; nothing ever carries an Access-Control-* header.
 */
export function createApp(): Koa {
  const app = new Koa();
  app.proxy = true;

  app.use(async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new HttpError(404, "not_found", `no such path: ${ctx.method} ${ctx.path}`);
      }
    } catch (error) {
      const known = error instanceof HttpError ? error : undefined;
      const status = known?.status ?? 500;
      ctx.status = status;
      for (const [name, value] of Object.entries(known?.headers ?? {})) ctx.set(name, value);
      const body: ErrorBody = {
        error: known?.message ?? "internal error",
        code: known?.code ?? "internal",
        ...known?.extra,
      };
      ctx.body = body;
      if (!known) ctx.app.emit("error", error, ctx);
    }
  });

  const router = new Router();
  // Liveness for Kubernetes' HTTP probe; no key needed, no data returned.
  router.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });
  app.use(router.routes());
  app.use(
    router.allowedMethods({
      throw: true,
      methodNotAllowed: () => new HttpError(405, "method_not_allowed", "method not allowed"),
      notImplemented: () => new HttpError(405, "method_not_allowed", "method not allowed"),
    }),
  );
  return app;
}
