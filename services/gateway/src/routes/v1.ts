import { bodyParser } from "@koa/bodyparser";
import type Router from "@koa/router";
import { RunStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { quarantineJson } from "@testrun/kit/run-json";
import type Koa from "koa";
import { servedOpenApiDocument } from "../api/openapi.js";
import { type Operation, type OperationName, operations } from "../api/operations.js";
import { checkQueryNames, type Input, validateInput } from "../api/validate.js";
import { artifactResponseHeaders } from "../artifact-headers.js";
import type { Authenticator } from "../auth.js";
import { callOptions, type GatewayContext, type GatewayState } from "../context.js";
import { historyJson, readHistory } from "../history.js";
import { HttpError } from "../http-error.js";
import { environmentJson, projectJson, runJson, runListJson, testCaseJson, testPlanJson } from "../render.js";
import {
  comparisonJson,
  failureGroupCaseJson,
  failureGroupJson,
  occurrenceJson,
  stateOf,
} from "../render-failures.js";
import { runsLimit, toStartRun } from "../start-run-body.js";
import { actorOf, keyOf, rpc, type V1Deps } from "./deps.js";
import { startOnce } from "./start-once.js";
import { waitForRun } from "./wait.js";

/** Largest request body accepted (docs/rest-api.md: over 1 MiB gives 413). */
const maxBodyBytes = 1024 * 1024;

/**
 * An operation's handler behind its authentication: validates the request's input (query values,
 * headers, body, path parameters) as the operation's schemas say, then answers it. The MCP tools
 * (mcp/) call these for requests whose key was already verified.
 */
export type ValidatedHandler = (ctx: GatewayContext) => Promise<void>;

export type V1Handlers = Record<OperationName, ValidatedHandler>;

/**
 * The /v1 routes, registered from the operation table (api/operations.ts), which also validates
 * them. Returns each operation's handler behind its authentication.
 */
export function v1Routes(router: Router<GatewayState>, deps: V1Deps): V1Handlers {
  const { catalog, runs, startRunTimeoutMs } = deps;
  const handlers: Partial<V1Handlers> = {};
  const route = routeOn(router, deps.auth, handlers);

  route(operations.getProject, async (ctx) => {
    const response = await rpc(ctx, () =>
      catalog.getProject(
        { actor: actorOf(ctx), projectId: keyOf(ctx).projectId, includeContents: true },
        callOptions(ctx),
      ),
    );
    if (!response.project) throw new Error("GetProject answered without a project");
    ctx.body = {
      project: projectJson(response.project),
      environments: response.environments.map(environmentJson),
      testPlans: response.testPlans.map(testPlanJson),
    };
  });

  route(operations.listEnvironments, async (ctx) => {
    const response = await rpc(ctx, () =>
      catalog.listEnvironments({ actor: actorOf(ctx), projectId: keyOf(ctx).projectId }, callOptions(ctx)),
    );
    ctx.body = { environments: response.environments.map(environmentJson) };
  });

  route(operations.listTestPlans, async (ctx) => {
    const response = await rpc(ctx, () =>
      catalog.listTestPlans({ actor: actorOf(ctx), projectId: keyOf(ctx).projectId }, callOptions(ctx)),
    );
    ctx.body = { testPlans: response.testPlans.map(testPlanJson) };
  });

  route(operations.listTestCases, async (ctx, { query }) => {
    const tags = query.tag ?? [];
    const search = query.search;
    const response = await rpc(ctx, () =>
      catalog.listTestCases(
        { actor: actorOf(ctx), projectId: keyOf(ctx).projectId, tags, ...(search && { search }) },
        callOptions(ctx),
      ),
    );
    ctx.body = { testCases: response.testCases.map(testCaseJson), truncated: response.truncated };
  });

  route(operations.startRun, async (ctx, { body, headers }) => {
    const start = toStartRun(body);
    await startOnce(ctx, deps, headers["Idempotency-Key"], "startRun", () =>
      runs.startRun(
        { actor: actorOf(ctx), projectId: keyOf(ctx).projectId, ...start },
        { ...callOptions(ctx), timeoutMs: startRunTimeoutMs },
      ),
    );
  });

  route(operations.listRuns, async (ctx, { query }) => {
    const limit = runsLimit(query.limit);
    const response = await rpc(ctx, () =>
      runs.listRuns({ actor: actorOf(ctx), projectId: keyOf(ctx).projectId, limit }, callOptions(ctx)),
    );
    ctx.body = { runs: response.runs.map(runListJson) };
  });

  route(operations.getRun, async (ctx, { params, query }) => {
    const request = { actor: actorOf(ctx), projectId: keyOf(ctx).projectId, runId: params.id };
    const run =
      query.wait === undefined
        ? (await rpc(ctx, () => runs.getRun(request, callOptions(ctx)))).run
        : await waitForRun(ctx, deps, request, Number(query.wait));
    if (!run) throw new Error("GetRun answered without a run");
    ctx.body = runJson(run, ctx.state.origin);
  });

  route(operations.cancelRun, async (ctx, { params }) => {
    const response = await rpc(ctx, () =>
      runs.cancelRun(
        { actor: actorOf(ctx), projectId: keyOf(ctx).projectId, runId: params.id },
        callOptions(ctx),
      ),
    );
    if (!response.run) throw new Error("CancelRun answered without a run");
    if (response.alreadyFinished) {
      const status = RunStatus[response.run.status];
      throw new HttpError(
        409,
        "run_finished",
        `the run already finished (${status}); there is nothing to cancel`,
      );
    }
    ctx.body = runJson(response.run, ctx.state.origin);
  });

  route(operations.rerunRun, async (ctx, { params, body, headers }) => {
    const failedOnly = body.failedOnly ?? false;
    await startOnce(ctx, deps, headers["Idempotency-Key"], `rerunRun ${params.id}`, () =>
      runs.rerunRun(
        { actor: actorOf(ctx), projectId: keyOf(ctx).projectId, runId: params.id, failedOnly },
        { ...callOptions(ctx), timeoutMs: startRunTimeoutMs },
      ),
    );
  });

  route(operations.getArtifact, async (ctx, { params }) => {
    const { artifact, content } = await rpc(ctx, () =>
      runs.getArtifact({ actor: actorOf(ctx), artifactId: params.artifactId }, callOptions(ctx)),
    );
    if (!artifact) throw new Error("GetArtifact answered without an artifact");
    // Its url names its run and test: an artifact asked for under another is not there.
    if (artifact.runId !== params.runId || artifact.testResultId !== params.testResultId)
      throw new HttpError(404, "not_found", "no such artifact");
    for (const [name, value] of Object.entries(artifactResponseHeaders(artifact))) ctx.set(name, value);
    ctx.body = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  });

  route(operations.getRunComparison, async (ctx, { params, query }) => {
    const response = await rpc(ctx, () =>
      runs.compareRuns(
        {
          actor: actorOf(ctx),
          projectId: keyOf(ctx).projectId,
          runId: params.id,
          ...(query.base && { baseRunId: query.base }),
        },
        callOptions(ctx),
      ),
    );
    ctx.body = comparisonJson(response);
  });

  route(operations.listFailureGroups, async (ctx, { query }) => {
    const response = await rpc(ctx, () =>
      runs.listFailureGroups(
        {
          actor: actorOf(ctx),
          projectId: keyOf(ctx).projectId,
          states: [...new Set(query.state ?? [])].map(stateOf),
          limit: query.limit === undefined ? 50 : Number(query.limit),
          cursor: query.cursor ?? "",
        },
        callOptions(ctx),
      ),
    );
    ctx.body = {
      failureGroups: response.groups.map(failureGroupJson),
      nextCursor: response.nextCursor || null,
    };
  });

  route(operations.getFailureGroup, async (ctx, { params, query }) => {
    const response = await rpc(ctx, () =>
      runs.getFailureGroup(
        {
          actor: actorOf(ctx),
          projectId: keyOf(ctx).projectId,
          failureGroupId: params.id,
          limit: query.limit === undefined ? 50 : Number(query.limit),
          cursor: query.cursor ?? "",
        },
        callOptions(ctx),
      ),
    );
    if (!response.group) throw new Error("GetFailureGroup answered without a group");
    ctx.body = {
      failureGroup: failureGroupJson(response.group),
      occurrences: response.occurrences.map(occurrenceJson),
      nextCursor: response.nextCursor || null,
      cases: response.cases.map(failureGroupCaseJson),
    };
  });

  route(operations.getTestCaseHistory, async (ctx, { params, query }) => {
    ctx.body = historyJson(await readHistory(ctx, deps, params.id, query));
  });

  route(operations.listQuarantines, async (ctx) => {
    const response = await rpc(ctx, () =>
      runs.listQuarantines(
        { actor: actorOf(ctx), projectId: keyOf(ctx).projectId, includeEnded: false },
        callOptions(ctx),
      ),
    );
    ctx.body = { quarantines: response.quarantines.map(quarantineJson) };
  });

  route(operations.getOpenApi, async (ctx) => {
    const document = servedOpenApiDocument();
    // The same for everyone and changes only with the gateway's version: caches may keep it.
    ctx.set("Cache-Control", "public, max-age=3600");
    ctx.set("ETag", document.etag);
    ctx.type = "application/json";
    ctx.body = document.json;
  });
  return handlers as V1Handlers;
}

/**
 * Registers an operation of the table: its query names checked before anything else, its JSON
 * body read (before the key, so an oversized body is refused unread), the key it needs, then its
 * query values, headers and body validated, and the handler called with them.
 */
function routeOn(router: Router<GatewayState>, auth: Authenticator, handlers: Partial<V1Handlers>) {
  return <O extends Operation>(
    operation: O,
    handler: (ctx: GatewayContext, input: Input<O>) => Promise<void>,
  ): void => {
    const path = operation.path.replace(/\{(\w+)\}/g, ":$1");
    const validated: ValidatedHandler = (ctx) => handler(ctx, validateInput(operation, ctx));
    // Every operation's id is its name in the table (api/operations.ts).
    handlers[operation.operationId as OperationName] = validated;
    const stack: Koa.Middleware<GatewayState>[] = [checkQueryNames(operation)];
    // The key first, from the headers: a request without a working one is answered before a byte
    // of its body is read, and its connection closes (kit http-server.ts), so an anonymous client
    // cannot hold the gateway's memory or sockets with slow bodies.
    if (operation.access !== "none") stack.push(auth.require(operation.access));
    if (operation.body) stack.push(jsonBody(operation.body.required));
    stack.push(validated);
    router[operation.method](operation.operationId, path, ...stack);
  };
}

/**
 * Parses a JSON object body of at most 1 MiB (the content import: more) into ctx.request.body. Runs after authentication, so
 * only a caller with a working key has its body read; an oversized body is refused from its
 * Content-Length without being read. Where the body is optional (cancel, rerun) an empty request
 * counts as `{}`. A client that sent `Expect: 100-continue` is told to send its body only here
 * (the server holds it back: main.ts, `holdContinue`); the whole body must arrive within
 * HTTP_BODY_TIMEOUT_SECONDS (kit http-server.ts answers 408 past it).
 */
export function jsonBody(required: boolean, limitBytes = maxBodyBytes): Koa.Middleware<GatewayState> {
  const parse = bodyParser({
    enableTypes: ["json"],
    jsonLimit: limitBytes,
    jsonStrict: false,
    encoding: "utf-8",
  });
  return async (ctx, next) => {
    // A body that may be left out may be empty (no Content-Length, or 0, whatever its type): `{}`.
    if (!required && !ctx.request.length && !ctx.get("Transfer-Encoding")) {
      ctx.request.body = {};
      return next();
    }
    // ctx.is answers null for a request without a body, false for a body of another type.
    if (ctx.is("application/json", "application/*+json") === false) {
      throw new HttpError(
        400,
        "invalid_request",
        "the request body must be JSON (Content-Type: application/json)",
      );
    }
    // The client waits for 100 Continue before it sends the body (main.ts, holdContinue).
    if (ctx.get("Expect").toLowerCase() === "100-continue" && !ctx.res.headersSent) ctx.res.writeContinue();
    try {
      await parse(ctx, async () => {});
    } catch (error) {
      const status = (error as { status?: number }).status ?? 500;
      if (status === 413) {
        // The rest of the body is never read: the connection cannot carry another request.
        throw new HttpError(
          413,
          "payload_too_large",
          `the request body is larger than ${limitBytes / 1024 / 1024} MiB`,
          {},
          { Connection: "close" },
        );
      }
      // Body-parser errors carry status 400 but no `expose`; anything else is not the client's fault.
      if (status >= 500) throw error;
      throw new HttpError(400, "invalid_request", "the request body is not valid JSON");
    }
    const body: unknown = ctx.request.body;
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      throw new HttpError(400, "invalid_request", "the request body must be a JSON object");
    }
    await next();
  };
}
