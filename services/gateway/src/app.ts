import Router from "@koa/router";
import { httpMetricsMiddleware, type Logger, probeRoutes } from "@testrun/kit";
import Koa from "koa";
import type { GatewayState } from "./context.js";
import { llmsTxt } from "./llms-txt.js";
import { mcpRoute } from "./mcp/route.js";
import { requestContext } from "./request-context.js";
import { contentImportRoute } from "./routes/content-import.js";
import type { V1Deps } from "./routes/deps.js";
import { v1Routes } from "./routes/v1.js";

export interface AppOptions extends V1Deps {
  logger: Logger;
  /** Reverse proxies in front that append to X-Forwarded-For; 0 trusts no forwarding header. */
  trustProxyHops: number;
  /** Whether the process takes new requests: false while it starts and while it drains at shutdown. */
  isReady: () => boolean;
  /** API_URL: the REST API's public origin; unset, each request's own. */
  apiUrl?: string;
}

/**
 * The /v1 HTTP application. Every response is JSON and carries X-Request-Id; every error has the
 * shape `{ error, code }`; nothing ever carries an Access-Control-* header.
 */
export function createApp(options: AppOptions): Koa<GatewayState> {
  const app = new Koa<GatewayState>();
  app.proxy = options.trustProxyHops > 0;
  app.maxIpsCount = options.trustProxyHops;

  const router = new Router<GatewayState>();
  probeRoutes(router, options.isReady);
  // How an AI agent uses the API (llmstxt.org), for anyone: no key, no rate limit, cacheable.
  router.get("/llms.txt", (ctx) => {
    ctx.set("Cache-Control", "public, max-age=3600");
    ctx.type = "text/plain; charset=utf-8";
    ctx.body = llmsTxt;
  });
  const handlers = v1Routes(router, options);
  // A pipeline's content push: the one route of content tokens (never of API keys).
  contentImportRoute(router, { auth: options.auth, catalog: options.catalog });
  // MCP for AI agents: the same operations as tools, with the same keys and limits.
  mcpRoute(router, { auth: options.auth, handlers });

  // Outermost: counts every request with the status the client got, by route template.
  app.use(httpMetricsMiddleware());
  app.use(async (ctx, next) => {
    await next();
    // Not ready (draining): the connection closes after this response, so a client keeping
    // connections alive opens its next one to a replica that stays.
    if (!options.isReady()) ctx.set("Connection", "close");
  });
  app.use(requestContext(options.logger, router, options.apiUrl));
  app.use(router.routes());
  return app;
}
