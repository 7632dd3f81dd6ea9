// What the /v1 handlers are given, and how every handler calls the other services for the
// request's key. A module of its own so that v1.ts, start-once.ts and wait.ts all import it and
// none imports another back.
import type { Client } from "@connectrpc/connect";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { ApiKeyActor } from "@testrun/gen/testrun/common/v1/actor_pb";
import type { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { Authenticator } from "../auth.js";
import type { GatewayContext } from "../context.js";
import type { IdempotencyStore } from "../idempotency.js";
import { httpErrorFromRpc } from "../rpc-errors.js";
import type { WaitSlots } from "../waits.js";

export interface V1Deps {
  auth: Authenticator;
  catalog: Pick<
    Client<typeof CatalogService>,
    "getProject" | "listEnvironments" | "listTestPlans" | "listTestCases" | "getTestCase" | "importContent"
  >;
  runs: Pick<
    Client<typeof RunsService>,
    | "startRun"
    | "getRun"
    | "listRuns"
    | "watchRun"
    | "cancelRun"
    | "rerunRun"
    | "getArtifact"
    | "compareRuns"
    | "listFailureGroups"
    | "getFailureGroup"
    | "getTestCaseHistory"
    | "listQuarantines"
  >;
  /** StartRun's deadline (START_RUN_TIMEOUT_MS), longer than the other calls'. */
  startRunTimeoutMs: number;
  /** The bound on concurrent long-polls per key. */
  waits: WaitSlots;
  /** Idempotency-Key records. */
  idempotency: IdempotencyStore;
  /** Aborts when the gateway shuts down: long-polls then answer at once. */
  stopping?: AbortSignal;
}

/** The request's verified key; a route that needs one runs only behind the key check. */
export const keyOf = (ctx: GatewayContext): ApiKeyActor => {
  if (!ctx.state.key) throw new Error("route reached without authentication");
  return ctx.state.key;
};

/** The request's key as the actor the other services' requests carry. */
export const actorOf = (ctx: GatewayContext) => ({ kind: { case: "apiKey" as const, value: keyOf(ctx) } });

/** Runs a call of another service, turning its failure into the contract's HTTP error. */
export async function rpc<T>(ctx: GatewayContext, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const { http, expected } = httpErrorFromRpc(error);
    if (!expected) ctx.state.log.error({ err: error }, "service call failed");
    throw http;
  }
}
