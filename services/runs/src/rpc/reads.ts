import { Code, ConnectError } from "@connectrpc/connect";
import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { RunStatus as ApiRunStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { callerIdentity } from "@testrun/kit";
import type { RunStatus } from "../db/entities.js";
import type { ServiceDeps } from "../deps.js";
import { invalid, runNotFound } from "../errors.js";
import { renderRun, renderSteps, renderTest } from "../render.js";
import { decodeFinishedCursor, decodePageToken, encodeFinishedCursor } from "../store/reads.js";
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

/** GetRun, ListRuns, GetTestResult: a project's runs and test results as callers read them; ListFinishedRuns for services. */
export function readHandlers(deps: ServiceDeps): Handlers {
  const { reads, links, kinds } = deps;
  return {
    async getRun(req) {
      await authorize(deps, req.actor, req.projectId, Permission.READ);
      const found = await reads.getRun(req.projectId, req.runId);
      if (!found) throw runNotFound();
      return { run: renderRun(found.run, found.tests, links, kinds) };
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

    async listFinishedRuns(req, ctx) {
      if (callerIdentity(ctx) !== "service")
        throw new ConnectError("only services may follow finished runs", Code.PermissionDenied);
      if (req.limit < 0 || req.limit > 100) throw invalid("limit must be 0 to 100");
      const after = req.cursor ? decodeFinishedCursor(req.cursor) : undefined;
      if (req.cursor && !after) throw invalid("cursor is not valid");
      const found = await reads.listFinished(after, req.limit === 0 ? 50 : req.limit);
      const last = found.at(-1);
      return {
        runs: found.map((entry) => renderRun(entry.run, entry.tests, links)),
        nextCursor: last ? encodeFinishedCursor(last.cursor) : req.cursor,
      };
    },

    async getTestResult(req) {
      await authorize(deps, req.actor, req.projectId, Permission.READ);
      const found = await reads.getTestResult(req.projectId, req.runId, req.testResultId);
      if (!found.run) throw runNotFound();
      if (!found.test) throw new ConnectError("no such test in this run", Code.NotFound);
      return {
        test: renderTest(found.test, req.projectId, links, kinds),
        steps: renderSteps(found.test),
        maxAttempts: deps.maxAttempts,
      };
    },
  };
}
