import {
  ApiError,
  type Environment,
  type Run,
  type TestPlan,
  type TestrunApi,
  TooLarge,
} from "@testrun/mcp-tools";
import type { GatewayContext } from "../context.js";
import { HttpError } from "../http-error.js";
import type { V1Handlers, ValidatedHandler } from "../routes/v1.js";

/** A REST request as its route would receive it after authentication. */
interface RestRequest {
  /** Query values as text, as Koa parses them (a repeated parameter as an array). */
  query?: Record<string, string | string[]>;
  /** Header names in lower case. */
  headers?: Record<string, string>;
  body?: Record<string, unknown>;
  params?: Record<string, string>;
}

/** What the route answered. */
interface RestAnswer {
  status: number;
  /** A JSON answer's object, or the bytes of an artifact. */
  body: Record<string, unknown> | Buffer;
  headers: Record<string, string>;
}

/**
 * The context a route handler gets for a tool call: the request's input, the MCP request's state
 * (its verified key, request id and logger) and connection (a long-poll ends when the client goes),
 * and its own answer, which never reaches the MCP request's response.
 *
 * It carries what the handlers of routes/v1.ts use (validateInput's query, headers, request.body
 * and params; state; res for its "close"; status, body and set for the answer), not a whole Koa
 * context: the end-to-end tests call every tool, so a handler reaching for more fails there.
 */
function toolCallContext(parent: GatewayContext, request: RestRequest) {
  const answer: RestAnswer = { status: 200, body: {}, headers: {} };
  const context = {
    state: parent.state,
    res: parent.res,
    query: request.query ?? {},
    headers: request.headers ?? {},
    params: request.params ?? {},
    request: { body: request.body },
    set(name: string, value: string) {
      answer.headers[name.toLowerCase()] = value;
    },
    get status() {
      return answer.status;
    },
    set status(status: number) {
      answer.status = status;
    },
    get body() {
      return answer.body;
    },
    set body(body: Record<string, unknown> | Buffer) {
      answer.body = body;
    },
  };
  return { ctx: context as unknown as GatewayContext, answer };
}

/**
 * The REST API inside the gateway, for the MCP tools of one request whose key was verified: each
 * method runs the route handler of its operation (input validation included) as REST would after
 * authentication, so a tool call does exactly what its REST request does, and counts once: the MCP
 * request it came in was counted when it was authenticated.
 *
 * Refusals become the ApiError the REST client would throw (status, error body, Retry-After);
 * anything unexpected is logged here and becomes a bare 500, as REST answers it.
 */
export function inProcessApi(parent: GatewayContext, handlers: V1Handlers): TestrunApi {
  const answer = async (handler: ValidatedHandler, request: RestRequest): Promise<RestAnswer> => {
    const { ctx, answer } = toolCallContext(parent, request);
    try {
      await handler(ctx);
    } catch (error) {
      throw apiErrorOf(parent, error);
    }
    return answer;
  };
  const body = async <T>(handler: ValidatedHandler, request: RestRequest = {}) =>
    (await answer(handler, request)).body as T;
  const started = async (handler: ValidatedHandler, request: RestRequest) => {
    const { body, headers } = await answer(handler, request);
    return { run: body as unknown as Run, replayed: headers["idempotency-replayed"] === "true" };
  };
  const idempotency = (key: string | undefined): Record<string, string> =>
    key ? { "idempotency-key": key } : {};

  return {
    async listEnvironments() {
      return (await body<{ environments: Environment[] }>(handlers.listEnvironments)).environments;
    },
    async listTestPlans() {
      return (await body<{ testPlans: TestPlan[] }>(handlers.listTestPlans)).testPlans;
    },
    listTestCases(filter = {}) {
      const query: Record<string, string | string[]> = {};
      if (filter.tags?.length) query.tag = filter.tags;
      if (filter.search) query.search = filter.search;
      return body(handlers.listTestCases, { query });
    },
    getRun(id, waitSeconds) {
      return body(handlers.getRun, {
        params: { id },
        query: waitSeconds === undefined ? {} : { wait: String(waitSeconds) },
      });
    },
    startRun(request, options = {}) {
      return started(handlers.startRun, {
        body: { ...request },
        headers: idempotency(options.idempotencyKey),
      });
    },
    cancelRun(id) {
      return body(handlers.cancelRun, { params: { id }, body: {} });
    },
    rerunRun(id, failedOnly, options = {}) {
      return started(handlers.rerunRun, {
        params: { id },
        body: { failedOnly },
        headers: idempotency(options.idempotencyKey),
      });
    },
    getTestCaseHistory(id, page = {}) {
      const query: Record<string, string> = {};
      if (page.environment) query.environment = page.environment;
      if (page.limit !== undefined) query.limit = String(page.limit);
      if (page.cursor) query.cursor = page.cursor;
      return body(handlers.getTestCaseHistory, { params: { id }, query });
    },
    compareRuns(id, base) {
      return body(handlers.getRunComparison, { params: { id }, query: base === undefined ? {} : { base } });
    },
    getFailureGroup(id, page = {}) {
      const query: Record<string, string> = {};
      if (page.limit !== undefined) query.limit = String(page.limit);
      if (page.cursor) query.cursor = page.cursor;
      return body(handlers.getFailureGroup, { params: { id }, query });
    },
    // The route reads the artifact whole (GetArtifact carries its bytes): the bound is checked after.
    async getArtifact(ref, options) {
      const params = { runId: ref.runId, testResultId: ref.testResultId, artifactId: ref.id };
      const { body, headers } = await answer(handlers.getArtifact, { params });
      if (!Buffer.isBuffer(body)) throw new Error("GET of an artifact answered without bytes");
      if (body.byteLength > options.maxBytes) throw new TooLarge(options.maxBytes);
      return { contentType: headers["content-type"] ?? "application/octet-stream", bytes: body };
    },
  };
}

/** A route's refusal as the REST client sees it; anything else logged and answered as a bare 500. */
function apiErrorOf(ctx: GatewayContext, error: unknown): ApiError {
  if (!(error instanceof HttpError)) {
    ctx.state.log.error({ err: error }, "MCP tool call failed");
    return new ApiError(500, { error: "internal error", code: "internal" }, undefined);
  }
  const retryAfter = error.headers["Retry-After"];
  return new ApiError(
    error.status,
    { error: error.message, code: error.code, ...error.extra },
    retryAfter === undefined ? undefined : Number(retryAfter),
  );
}
