import { Code, ConnectError } from "@connectrpc/connect";
import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { RunStatus as ApiRunStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { RunStatus } from "../db/entities.js";
import type { ServiceDeps } from "../deps.js";
import { invalid, runNotFound } from "../errors.js";
import { renderRun, renderSteps, renderTest } from "../render.js";
import { decodePageToken } from "../store/reads.js";
import { authorize, type Handlers } from "./context.js";

/** ListRuns' status filter; UNSPECIFIED (and any unknown number) is not in it. */
const listStatuses: Partial<Record<ApiRunStatus, RunStatus>> = {
  [ApiRunStatus.QUEUED]: "queued",
  [ApiRunStatus.RUNNING]: "running",
  [ApiRunStatus.PASSED]: "passed",
  [ApiRunStatus.FAILED]: "failed",
  [ApiRunStatus.SKIPPED]: "skipped",
};

const invalidStatus = (): never => {
  throw invalid("statuses must be QUEUED, RUNNING, PASSED, FAILED or SKIPPED");
};
const invalidToken = (): never => {
  throw invalid("page_token is not valid");
};

/** GetRun, ListRuns, GetTestResult: a project's runs and test results as callers read them. */
export function readHandlers(deps: ServiceDeps): Handlers {
  const { reads, links } = deps;
  return {
    async getRun(req) {
      await authorize(deps, req.actor, req.projectId, Permission.READ);
      const found = await reads.getRun(req.projectId, req.runId);
      if (!found) throw runNotFound();
      return { run: renderRun(found.run, found.tests, links) };
    },

    async listRuns(req) {
      await authorize(deps, req.actor, req.projectId, Permission.READ);
      if (req.limit < 0) throw invalid("limit must not be negative");
      const limit = req.limit === 0 ? 20 : Math.min(req.limit, 100);
      const statuses = req.statuses.map((s) => listStatuses[s] ?? invalidStatus());
      const after = req.pageToken ? (decodePageToken(req.pageToken) ?? invalidToken()) : undefined;
      const page = await reads.listRuns(
        req.projectId,
        { statuses, testPlanId: req.testPlanId, environmentId: req.environmentId },
        after,
        limit,
      );
      return { runs: page.runs.map((row) => renderRun(row, undefined, links)), nextPageToken: page.next };
    },

    async getTestResult(req) {
      await authorize(deps, req.actor, req.projectId, Permission.READ);
      const found = await reads.getTestResult(req.projectId, req.runId, req.testResultId);
      if (!found.run) throw runNotFound();
      if (!found.test) throw new ConnectError("no such test in this run", Code.NotFound);
      return {
        test: renderTest(found.test, req.projectId, links),
        steps: renderSteps(found.test),
        maxAttempts: deps.maxAttempts,
      };
    },
  };
}
