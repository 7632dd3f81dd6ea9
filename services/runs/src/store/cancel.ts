import type { Orm } from "@testrun/kit";
import { isFinal, type RunWithTests } from "../rows.js";
import { lockRun, runWithTests, transaction } from "./locking.js";
import { type Effects, settle } from "./settle.js";

/** CancelRun's write: a member (or a key that may start runs) stops a run. */
export class CancelStore {
  constructor(private readonly orm: Orm) {}

  /**
   * Cancels a run: open tests SKIPPED (the QUEUED ones refundable). A finished run is returned as
   * it is, with alreadyFinished (decided under the run's lock, so a run finishing concurrently is
   * either cancelled or already finished, never both). Undefined when the project has no such run.
   */
  cancel(
    projectId: string,
    runId: string,
  ): Promise<{ result: RunWithTests; effects: Effects; alreadyFinished: boolean } | undefined> {
    return transaction(this.orm, async (em) => {
      const run = await lockRun(em, "r.id = ? and r.project_id = ?", [runId, projectId]);
      if (!run) return undefined;
      let effects: Effects = {};
      if (!isFinal(run.status)) {
        await em.execute(
          `update runs.test_results set refundable = (status = 'queued'), status = 'skipped', skip_reason = 'cancelled',
             summary = case when status = 'queued' then 'cancelled before it ran' else 'cancelled while running' end,
             finished_at = now(), lease_expires_at = null
           where run_id = ? and status in ('queued', 'running')`,
          [runId],
        );
        effects = await settle(em, runId, "cancelled");
      }
      return {
        result: await runWithTests(em, runId),
        effects,
        alreadyFinished: isFinal(run.status),
      };
    });
  }
}
