import { Code, ConnectError } from "@connectrpc/connect";
import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { ServiceDeps } from "../deps.js";
import { runNotFound } from "../errors.js";
import { authorize, type Handlers } from "./context.js";

/** WatchRun: a run and its changes as a stream (the feeds behind it: ../watch.ts). */
export function watchHandlers(deps: ServiceDeps): Handlers {
  const { watches, logger } = deps;
  return {
    async *watchRun(req, context) {
      try {
        await authorize(deps, req.actor, req.projectId, Permission.READ);
        if (!req.runId) throw runNotFound();
        yield* watches.watch(req.projectId, req.runId, req.mode, context.signal);
      } catch (error) {
        // A stream's errors pass the call-logging interceptor by (it returns when the stream
        // opens), so what it does for other calls is done here: no driver message reaches a caller.
        // A caller that closed its stream or went away is normal (a run page left, a long-poll
        // answered): writing to its closed stream fails, and that is no error of ours.
        if (context.signal.aborted) {
          logger.debug({ err: error, rpc: "WatchRun" }, "the caller left the stream");
          return;
        }
        if (error instanceof ConnectError) throw error;
        logger.error({ err: error, rpc: "WatchRun" }, "rpc crashed");
        throw new ConnectError("internal error", Code.Internal);
      }
    },
  };
}
