import type Router from "@koa/router";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { testrunMcpServer } from "@testrun/mcp-tools";
import type { Authenticator } from "../auth.js";
import type { GatewayContext, GatewayState } from "../context.js";
import { jsonBody, type V1Handlers } from "../routes/v1.js";
import { inProcessApi } from "./in-process-api.js";

/** The request headers the MCP transport reads; the key's headers never reach it. */
const transportHeaders = ["accept", "content-type", "mcp-protocol-version", "mcp-session-id"];

/**
 * POST /v1/mcp: the MCP tools (@testrun/mcp-tools) over Streamable HTTP, for AI agents
 * (docs/agents.md, "MCP: the API as tools").
 *
 * - Authenticated as every /v1 request is (api key headers, 401/403/429, the per-key rate limit, no
 *   CORS) from its headers, then its JSON body read (at most 1 MiB, one JSON-RPC message: a batch is refused).
 *   Every POST counts as one request against the key: a tool call is one, and so are initialize,
 *   the initialized notification and tools/list. A tool runs its operation's route handler in this
 *   process (in-process-api.ts), which counts nothing more.
 * - Stateless: no session id, a new server and transport for every POST, so any replica answers any
 *   request. Answers are JSON (enableJsonResponse), not SSE streams: every tool answers once.
 * - GET (the server-to-client stream) and DELETE (ending a session) are not served: 405, as the
 *   transport specification allows a server without such a stream or sessions to answer.
 */
export function mcpRoute(
  router: Router<GatewayState>,
  deps: { auth: Authenticator; handlers: V1Handlers },
): void {
  router.post("mcp", "/v1/mcp", deps.auth.require("read"), jsonBody(true), async (ctx) => {
    logMessage(ctx);
    const server = testrunMcpServer(inProcessApi(ctx, deps.handlers));
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    try {
      await server.connect(transport);
      const response = await transport.handleRequest(transportRequest(ctx), {
        parsedBody: ctx.request.body,
      });
      await answerWith(ctx, response);
    } finally {
      await server.close();
    }
  });
}

/** Which JSON-RPC method (and tool) the request carries, beside the request's own log line; never the arguments. */
function logMessage(ctx: GatewayContext): void {
  const { method, params } = ctx.request.body as { method?: unknown; params?: { name?: unknown } };
  if (typeof method !== "string") return;
  const tool =
    method === "tools/call" && typeof params?.name === "string" ? params.name.slice(0, 64) : undefined;
  ctx.state.log.info({ method: method.slice(0, 64), ...(tool && { tool }) }, "mcp message");
}

/** The request as the transport reads it: its method, URL and the headers it looks at. */
function transportRequest(ctx: GatewayContext): Request {
  const headers = new Headers();
  for (const name of transportHeaders) {
    const value = ctx.get(name);
    if (value) headers.set(name, value);
  }
  return new Request(new URL(ctx.originalUrl, "http://gateway"), { method: ctx.method, headers });
}

/** The transport's answer as this request's: status, its headers, and its JSON (none for a 202). */
async function answerWith(ctx: GatewayContext, response: Response): Promise<void> {
  ctx.status = response.status;
  for (const [name, value] of response.headers) {
    if (name !== "content-length") ctx.set(name, value);
  }
  const text = await response.text();
  ctx.body = text;
  if (!text) ctx.remove("Content-Type");
}
