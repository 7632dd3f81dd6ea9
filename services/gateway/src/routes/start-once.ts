import type { Run } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { callOptions, type GatewayContext } from "../context.js";
import { HttpError } from "../http-error.js";
import { requestHash } from "../idempotency.js";
import { runJson } from "../render.js";
import { actorOf, keyOf, rpc, type V1Deps } from "./deps.js";

/**
 * Answers a POST that starts a run (POST /v1/runs, POST /v1/runs/{id}/rerun): 201 with the new
 * run. With an Idempotency-Key (idempotency.ts) the same request within 24 hours answers with the
 * run the first one started, marked `Idempotency-Replayed: true`, and starts nothing; another
 * request with the key is refused (422); a concurrent duplicate waits for the first and answers
 * with its run, so two requests never start two runs.
 */
export async function startOnce(
  ctx: GatewayContext,
  deps: Pick<V1Deps, "runs" | "idempotency">,
  idempotencyKey: string | undefined,
  operation: string,
  start: () => Promise<{ run?: Run }>,
): Promise<void> {
  if (idempotencyKey === undefined) return answer(ctx, await rpc(ctx, start));

  const keyId = keyOf(ctx).keyId;
  const request = requestHash(operation, ctx.request.body);
  const claim = await deps.idempotency.claim(keyId, idempotencyKey, request);
  switch (claim.kind) {
    case "reused":
      throw new HttpError(
        422,
        "idempotency_key_reused",
        "this Idempotency-Key was used in the last 24 hours with another request; send a new key with a new request",
      );
    case "in_use":
      throw new HttpError(
        409,
        "idempotency_key_in_use",
        "another request with this Idempotency-Key is still being answered; retry it in a moment",
      );
    case "replay": {
      const replayed = await rpc(ctx, () =>
        deps.runs.getRun(
          { actor: actorOf(ctx), projectId: keyOf(ctx).projectId, runId: claim.runId },
          callOptions(ctx),
        ),
      );
      ctx.set("Idempotency-Replayed", "true");
      return answer(ctx, replayed);
    }
    case "first":
      break;
  }

  let response: { run?: Run };
  try {
    response = await rpc(ctx, start);
  } catch (error) {
    // A run started but not read back (500 with its id) is the key's run; anything else started
    // nothing, and frees the key for a retry.
    const startedId = error instanceof HttpError ? error.extra.id : undefined;
    if (typeof startedId === "string")
      await deps.idempotency.started(keyId, idempotencyKey, request, startedId);
    else await deps.idempotency.failed(keyId, idempotencyKey);
    throw error;
  }
  if (response.run) await deps.idempotency.started(keyId, idempotencyKey, request, response.run.id);
  return answer(ctx, response);
}

function answer(ctx: GatewayContext, response: { run?: Run }): void {
  if (!response.run) throw new Error("a start answered without a run");
  ctx.status = 201;
  ctx.body = runJson(response.run, ctx.state.origin);
}
