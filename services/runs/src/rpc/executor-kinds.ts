import {
  isKnownKindCause,
  kindCauseMaxLength,
  knownKindCauses,
  type TestKind,
  testKinds,
} from "@testrun/kit";
import type { ServiceDeps } from "../deps.js";
import { invalid } from "../errors.js";
import type { KindReport } from "../executor-kinds.js";
import type { Handlers } from "./context.js";
import { requireExecutor } from "./executors.js";

/**
 * ReportExecutorKinds: an executor says which kinds of test it takes now, and why not one it is
 * configured for (executor-kinds.ts keeps it). Its cause is shown in every project's waiting and
 * skip messages, so it must be one of the phrases executors say (kit's knownKindCauses): an executor
 * token may not put its own words (a link, "contact support at …") in front of every user.
 * Executors run steps against servers anyone controls, so nothing else of it is believed.
 */
export function executorKindHandlers(deps: ServiceDeps): Handlers {
  return {
    async reportExecutorKinds(req, ctx) {
      requireExecutor(ctx);
      const executor = [...req.executor];
      if (executor.length < 1 || executor.length > 200) throw invalid("executor must be 1 to 200 characters");
      const kinds: Partial<Record<TestKind, KindReport>> = {};
      for (const entry of req.kinds) {
        const kind = entry.kind as TestKind;
        if (!testKinds.includes(kind)) throw invalid(`kind must be one of ${testKinds.join(", ")}`);
        if (kinds[kind]) throw invalid(`kind ${kind} is given twice`);
        if ([...entry.cause].length > kindCauseMaxLength)
          throw invalid(`cause must be at most ${kindCauseMaxLength} characters`);
        if (/[\p{C}\u2028\u2029]/u.test(entry.cause)) throw invalid("cause must be one line");
        if (entry.cause && (entry.available || !entry.configured))
          throw invalid("cause is for a kind configured and not available");
        if (entry.cause && !isKnownKindCause(entry.cause))
          throw invalid(`cause must be one of the phrases executors say: ${knownKindCauses.join("; ")}`);
        kinds[kind] = {
          configured: entry.configured,
          available: entry.configured && entry.available,
          ...(entry.cause && { cause: entry.cause }),
        };
      }
      await deps.kinds.report(req.executor, kinds);
      return {};
    },
  };
}
