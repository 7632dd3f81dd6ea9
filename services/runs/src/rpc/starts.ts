import { create } from "@bufbuild/protobuf";
import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { StartRunRequestSchema } from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { ServiceDeps } from "../deps.js";
import { invalid, runNotFound } from "../errors.js";
import { runsStarted } from "../metrics.js";
import { startRun } from "../start.js";
import { authorize, type Handlers } from "./context.js";

/** "<name> (rerun)" or "<name> (rerun of failed)", the original cut so the whole fits 200 characters. */
export function rerunName(original: string, failedOnly: boolean): string {
  const suffix = failedOnly ? " (rerun of failed)" : " (rerun)";
  return [...original].slice(0, 200 - suffix.length).join("") + suffix;
}

/** StartRun, RerunRun: both start a run the same way (start.ts). */
export function startHandlers(deps: ServiceDeps): Handlers {
  const { reads } = deps;
  return {
    async startRun(req, context) {
      const run = await startRun(deps, req, context.signal);
      runsStarted.inc();
      return { run };
    },

    async rerunRun(req, context) {
      // A key reruns what it may start, and is told so when its creator can no longer start runs
      // (the start below checks it again, as for any start); members need to read the run first.
      const keyActor = req.actor?.kind.case === "apiKey";
      await authorize(deps, req.actor, req.projectId, keyActor ? Permission.START_RUN : Permission.READ);
      const found = await reads.getRun(req.projectId, req.runId);
      if (!found) throw runNotFound();
      const tests = req.failedOnly ? found.tests.filter((test) => test.status === "failed") : found.tests;
      const testCaseIds = [...new Set(tests.map((test) => test.test_case_id))];
      if (testCaseIds.length === 0) throw invalid(`nothing to rerun: no test of run ${req.runId} failed`);
      // Start rights are the catalog's to check, as for any start (the selection resolves with them).
      const run = await startRun(
        deps,
        create(StartRunRequestSchema, {
          actor: req.actor,
          projectId: req.projectId,
          environment: found.run.environment_id,
          selection: { case: "testCaseIds", value: { ids: testCaseIds } },
          name: rerunName(found.run.name, req.failedOnly),
          // Run again as it was asked to run: with traces kept if the original kept them.
          recordTraces: found.run.record_traces,
        }),
        context.signal,
      );
      runsStarted.inc();
      return { run };
    },
  };
}
