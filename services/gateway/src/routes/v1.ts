import type { Client } from "@connectrpc/connect";
import { bodyParser } from "@koa/bodyparser";
import type Router from "@koa/router";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { ApiKeyActor } from "@testrun/gen/testrun/common/v1/actor_pb";
import type { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import type Koa from "koa";
import type { Authenticator } from "../auth.js";
import { callOptions, type GatewayContext, type GatewayState } from "../context.js";
import { HttpError } from "../http-error.js";
import { environmentJson, projectJson, runJson, runListJson, testCaseJson, testPlanJson } from "../render.js";
import { httpErrorFromRpc } from "../rpc-errors.js";
import { parseRunsLimit, parseStartRunBody } from "../start-run-body.js";

export interface V1Deps {
  auth: Authenticator;
  catalog: Pick<
    Client<typeof CatalogService>,
    "getProject" | "listEnvironments" | "listTestPlans" | "listTestCases"
  >;
  runs: Pick<Client<typeof RunsService>, "startRun" | "getRun" | "listRuns">;
  /** StartRun's deadline (START_RUN_TIMEOUT_MS), longer than the other calls'. */
  startRunTimeoutMs: number;
}

/** Largest request body accepted (decisions.md: over 1 MiB gives 413). */
const maxBodyBytes = 1024 * 1024;

/** The /v1 routes. Every one needs a key; each read is one catalog call scoped to the key's project. */
export function v1Routes(router: Router<GatewayState>, deps: V1Deps): void {
  const { auth, catalog, runs, startRunTimeoutMs } = deps;
  const read = auth.require("read");

  router.get("/v1/project", acceptQuery([]), read, async (ctx) => {
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

  router.get("/v1/environments", acceptQuery([]), read, async (ctx) => {
    const response = await rpc(ctx, () =>
      catalog.listEnvironments({ actor: actorOf(ctx), projectId: keyOf(ctx).projectId }, callOptions(ctx)),
    );
    ctx.body = { environments: response.environments.map(environmentJson) };
  });

  router.get("/v1/test-plans", acceptQuery([]), read, async (ctx) => {
    const response = await rpc(ctx, () =>
      catalog.listTestPlans({ actor: actorOf(ctx), projectId: keyOf(ctx).projectId }, callOptions(ctx)),
    );
    ctx.body = { testPlans: response.testPlans.map(testPlanJson) };
  });

  router.get("/v1/test-cases", acceptQuery(["tag", "search"]), read, async (ctx) => {
    const tag = ctx.query.tag;
    const tags = tag === undefined ? [] : Array.isArray(tag) ? tag : [tag];
    const search = ctx.query.search;
    if (Array.isArray(search)) throw new HttpError(400, "invalid_request", "search may be given once");
    const response = await rpc(ctx, () =>
      catalog.listTestCases(
        { actor: actorOf(ctx), projectId: keyOf(ctx).projectId, tags, ...(search && { search }) },
        callOptions(ctx),
      ),
    );
    ctx.body = { testCases: response.testCases.map(testCaseJson), truncated: response.truncated };
  });

  router.post("/v1/runs", acceptQuery([]), jsonBody(), auth.require("start_run"), async (ctx) => {
    const body = parseStartRunBody(ctx.request.body as Record<string, unknown>);
    const response = await rpc(ctx, () =>
      runs.startRun(
        { actor: actorOf(ctx), projectId: keyOf(ctx).projectId, ...body },
        { ...callOptions(ctx), timeoutMs: startRunTimeoutMs },
      ),
    );
    if (!response.run) throw new Error("StartRun answered without a run");
    ctx.status = 201;
    ctx.body = runJson(response.run);
  });

  router.get("/v1/runs", acceptQuery(["limit"]), read, async (ctx) => {
    const limit = parseRunsLimit(ctx.query.limit);
    const response = await rpc(ctx, () =>
      runs.listRuns({ actor: actorOf(ctx), projectId: keyOf(ctx).projectId, limit }, callOptions(ctx)),
    );
    ctx.body = { runs: response.runs.map(runListJson) };
  });

  router.get("/v1/runs/:id", acceptQuery([]), read, async (ctx) => {
    const response = await rpc(ctx, () =>
      runs.getRun(
        { actor: actorOf(ctx), projectId: keyOf(ctx).projectId, runId: ctx.params.id ?? "" },
        callOptions(ctx),
      ),
    );
    if (!response.run) throw new Error("GetRun answered without a run");
    ctx.body = runJson(response.run);
  });
}

const keyOf = (ctx: GatewayContext): ApiKeyActor => {
  if (!ctx.state.key) throw new Error("route reached without authentication");
  return ctx.state.key;
};

const actorOf = (ctx: GatewayContext) => ({ kind: { case: "apiKey" as const, value: keyOf(ctx) } });

/** Runs a call of another service, turning its failure into the contract's HTTP error. */
async function rpc<T>(ctx: GatewayContext, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const { http, expected } = httpErrorFromRpc(error);
    if (!expected) ctx.state.log.error({ err: error }, "service call failed");
    throw http;
  }
}

/**
 * Refuses query parameters the endpoint does not know: a typo such as `?tags=smoke` would
 * otherwise silently return everything.
 */
function acceptQuery(known: readonly string[]): Koa.Middleware<GatewayState> {
  return async (ctx, next) => {
    const unknown = Object.keys(ctx.query).find((name) => !known.includes(name));
    if (unknown !== undefined) {
      const hint = known.length ? `; accepted: ${known.join(", ")}` : "; this endpoint takes none";
      throw new HttpError(400, "invalid_request", `unknown query parameter "${unknown}"${hint}`);
    }
    await next();
  };
}

/**
 * Parses a JSON object body of at most 1 MiB into ctx.request.body. Runs before authentication:
 * an oversized body is refused from its Content-Length without being read.
 */
function jsonBody(): Koa.Middleware<GatewayState> {
  const parse = bodyParser({
    enableTypes: ["json"],
    jsonLimit: maxBodyBytes,
    jsonStrict: false,
    encoding: "utf-8",
  });
  return async (ctx, next) => {
    // ctx.is answers null for a request without a body, false for a body of another type.
    if (ctx.is("application/json", "application/*+json") === false) {
      throw new HttpError(
        400,
        "invalid_request",
        "the request body must be JSON (Content-Type: application/json)",
      );
    }
    try {
      await parse(ctx, async () => {});
    } catch (error) {
      const status = (error as { status?: number }).status ?? 500;
      if (status === 413) {
        // The rest of the body is never read: the connection cannot carry another request.
        throw new HttpError(
          413,
          "payload_too_large",
          "the request body is larger than 1 MiB",
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
