import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { ServiceDeps } from "../deps.js";
import { runNotFound } from "../errors.js";
import { renderRun } from "../render.js";
import { afterCommit, authorize, type Handlers } from "./context.js";

/** CancelRun: a member, or a key that may start runs, stops a run (its write: store/cancel.ts). */
export function cancelHandlers(deps: ServiceDeps): Handlers {
  const { cancels, links } = deps;
  return {
    async cancelRun(req) {
      // Members need EDIT; an API key may cancel what it may start (a pipeline stops its own runs).
      const keyActor = req.actor?.kind.case === "apiKey";
      await authorize(deps, req.actor, req.projectId, keyActor ? Permission.START_RUN : Permission.EDIT);
      const cancelled = await cancels.cancel(req.projectId, req.runId);
      if (!cancelled) throw runNotFound();
      await afterCommit(deps, cancelled.alreadyFinished ? undefined : req.runId, cancelled.effects);
      return {
        run: renderRun(cancelled.result.run, cancelled.result.tests, links),
        alreadyFinished: cancelled.alreadyFinished,
      };
    },
  };
}
