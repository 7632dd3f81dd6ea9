import { randomUUID } from "node:crypto";
import { type Run, WatchMode } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { callOptions, type GatewayContext } from "../context.js";
import { HttpError } from "../http-error.js";
import { longPollWaitsOpen } from "../metrics.js";
import { type actorOf, rpc, type V1Deps } from "./deps.js";

/** Which run, for whom: what GetRun and WatchRun both take. */
export interface RunRef {
  actor: ReturnType<typeof actorOf>;
  projectId: string;
  runId: string;
}

/** Seconds a client is told to wait when its key or its project holds every wait it may. */
const busyRetrySeconds = 1;

/**
 * GET /v1/runs/{id}?wait=S: follows the run with RunsService.WatchRun (no polling here) and answers
 * as soon as it is finished, or after S seconds with the run as it is then; also at once when the
 * gateway shuts down. The stream is asked for the finished run only (WATCH_MODE_FINISH): a wait
 * costs nothing per change of its run, and the run is read once more only when the wait ends
 * before the finish. The key, and its project, hold one of their bounded wait slots meanwhile
 * (waits.ts).
 */
export async function waitForRun(
  ctx: GatewayContext,
  deps: Pick<V1Deps, "runs" | "waits" | "stopping">,
  request: RunRef,
  seconds: number,
): Promise<Run | undefined> {
  const owner = { keyId: ctx.state.key?.keyId ?? "", projectId: request.projectId };
  // A slot outlasts the wait by the deadline of the read that may follow it.
  const slot = await deps.waits.acquire(owner, randomUUID(), seconds * 1000 + 10_000);
  if ("refused" in slot) {
    const held =
      slot.refused === "key"
        ? `this key already holds ${deps.waits.bounds.perKey} waits at once`
        : `this project's keys already hold ${deps.waits.bounds.perProject} waits at once`;
    throw new HttpError(
      429,
      "rate_limited",
      `${held}; retry in ${busyRetrySeconds} s, or poll without wait`,
      {},
      { "Retry-After": String(busyRetrySeconds) },
      "waits_exhausted",
    );
  }
  longPollWaitsOpen.inc();
  try {
    return await follow(ctx, deps, request, seconds);
  } finally {
    longPollWaitsOpen.dec();
    await slot.release().catch((err: unknown) => ctx.state.log.warn({ err }, "could not free a wait slot"));
  }
}

async function follow(
  ctx: GatewayContext,
  deps: Pick<V1Deps, "runs" | "stopping">,
  request: RunRef,
  seconds: number,
): Promise<Run | undefined> {
  // Ends the wait: S seconds passed, the client hung up, or the gateway is shutting down.
  const ended = new AbortController();
  const end = () => ended.abort();
  const timer = setTimeout(end, seconds * 1000);
  ctx.res.once("close", end);
  deps.stopping?.addEventListener("abort", end, { once: true });
  if (deps.stopping?.aborted) end();

  let last: Run | undefined;
  try {
    await rpc(ctx, async () => {
      try {
        const stream = deps.runs.watchRun(
          { ...request, mode: WatchMode.FINISH },
          {
            ...callOptions(ctx),
            signal: ended.signal,
            timeoutMs: seconds * 1000 + 5_000,
          },
        );
        for await (const message of stream) {
          if (message.run) last = message.run;
          if (last?.finished) break;
        }
      } catch (error) {
        // Before the first message a failure is the answer (404, say); after it, or once the
        // wait ended, the run is read once more below.
        if (!last && !ended.signal.aborted) throw error;
      }
    });
  } finally {
    clearTimeout(timer);
    ctx.res.off("close", end);
    deps.stopping?.removeEventListener("abort", end);
  }
  if (last?.finished) return last;
  // The wait ended before the finish (the stream's first message is the run as it was when the
  // wait began), or the stream ended before either (its runs replica stopping, say): the run as it
  // is now.
  return (await rpc(ctx, () => deps.runs.getRun(request, callOptions(ctx)))).run;
}
