import type { Client, ServiceImpl } from "@connectrpc/connect";
import type { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import type { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { Viewers } from "../viewer.js";
import { relay } from "./relay.js";

export interface FailureHandlerDeps {
  viewers: Viewers;
  runs: Client<typeof RunsService>;
}

/**
 * ConsoleService's failure groups and run comparisons (docs/console.md, "Failures" and "Compare"):
 * each is RunsService's, with the signed-in member as actor, so RunsService alone decides the
 * project's bounds and what a member may read.
 */
export function failureHandlers(
  deps: FailureHandlerDeps,
): Pick<ServiceImpl<typeof ConsoleService>, "listFailureGroups" | "getFailureGroup" | "compareRuns"> {
  const { viewers, runs } = deps;

  return {
    async listFailureGroups(req, ctx) {
      const actor = await viewers.actorIn(ctx, req.projectId);
      const { groups, nextCursor } = await relay(
        runs.listFailureGroups({
          actor,
          projectId: req.projectId,
          states: req.states,
          limit: req.limit,
          cursor: req.cursor,
        }),
      );
      return { groups, nextCursor };
    },

    async getFailureGroup(req, ctx) {
      const actor = await viewers.actorIn(ctx, req.projectId);
      const { group, occurrences, nextCursor, cases } = await relay(
        runs.getFailureGroup({
          actor,
          projectId: req.projectId,
          failureGroupId: req.failureGroupId,
          limit: req.limit,
          cursor: req.cursor,
        }),
      );
      return { group, occurrences, nextCursor, cases };
    },

    async compareRuns(req, ctx) {
      const actor = await viewers.actorIn(ctx, req.projectId);
      const comparison = await relay(
        runs.compareRuns({
          actor,
          projectId: req.projectId,
          runId: req.runId,
          baseRunId: req.baseRunId,
        }),
      );
      return { comparison };
    },
  };
}
