import type { Logger } from "pino";
import { runsFinished } from "./metrics.js";
import type { Effects } from "./store/settle.js";

/**
 * A run that a committed write finished (settle's `finished`): counted, and logged at info, the
 * run's one line for its end (its start has one too: start.ts). Only the write that set the run's
 * finish time reports it, so each run ends once in the log whichever path finished it: an
 * executor's last result, a skip, a cancel or the reconciler.
 */
export function reportFinished(effects: Effects, logger: Logger): void {
  const run = effects.finished;
  if (!run) return;
  runsFinished.inc({ status: run.status });
  logger.info(
    {
      runId: run.runId,
      projectId: run.projectId,
      status: run.status.toUpperCase(),
      ...(run.skipReason && { skipReason: run.skipReason }),
      passed: run.passed,
      failed: run.failed,
      skipped: run.skipped,
    },
    "run finished",
  );
}
