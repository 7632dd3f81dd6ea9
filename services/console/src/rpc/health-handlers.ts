import type { Client, ServiceImpl } from "@connectrpc/connect";
import type { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import type { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { Viewers } from "../viewer.js";
import { relay } from "./relay.js";

export interface HealthHandlerDeps {
  viewers: Viewers;
  runs: Client<typeof RunsService>;
}

/**
 * ConsoleService's test health and quarantine methods (docs/console.md, "Test health"): each is
 * RunsService's, with the signed-in member as actor, so RunsService alone decides the rights
 * (read for any member, quarantine for Editors, settings for Admins) and the bounds.
 */
export function healthHandlers(
  deps: HealthHandlerDeps,
): Pick<
  ServiceImpl<typeof ConsoleService>,
  | "listTestHealth"
  | "getTestCaseHistory"
  | "quarantineTestCase"
  | "liftQuarantine"
  | "listQuarantines"
  | "getHealthSettings"
  | "updateHealthSettings"
> {
  const { viewers, runs } = deps;

  return {
    async listTestHealth(req, ctx) {
      const actor = await viewers.actorIn(ctx, req.projectId);
      const { cases, nextCursor, counts } = await relay(
        runs.listTestHealth({
          actor,
          projectId: req.projectId,
          environmentId: req.environmentId,
          states: req.states,
          testCaseIds: req.testCaseIds,
          limit: req.limit,
          cursor: req.cursor,
        }),
      );
      return { cases, nextCursor, counts };
    },

    async getTestCaseHistory(req, ctx) {
      const actor = await viewers.actorIn(ctx, req.projectId);
      const { entries, nextCursor, health } = await relay(
        runs.getTestCaseHistory({
          actor,
          projectId: req.projectId,
          testCaseId: req.testCaseId,
          environmentId: req.environmentId,
          limit: req.limit,
          cursor: req.cursor,
        }),
      );
      return { entries, nextCursor, health };
    },

    async quarantineTestCase(req, ctx) {
      const actor = await viewers.actorIn(ctx, req.projectId);
      const { quarantine } = await relay(
        runs.quarantineTestCase({
          actor,
          projectId: req.projectId,
          testCaseId: req.testCaseId,
          reason: req.reason,
          days: req.days,
        }),
      );
      return { quarantine };
    },

    async liftQuarantine(req, ctx) {
      const actor = await viewers.actorIn(ctx, req.projectId);
      const { quarantine } = await relay(
        runs.liftQuarantine({ actor, projectId: req.projectId, testCaseId: req.testCaseId }),
      );
      return { quarantine };
    },

    async listQuarantines(req, ctx) {
      const actor = await viewers.actorIn(ctx, req.projectId);
      const { quarantines } = await relay(
        runs.listQuarantines({
          actor,
          projectId: req.projectId,
          testCaseId: req.testCaseId,
          includeEnded: req.includeEnded,
        }),
      );
      return { quarantines };
    },

    async getHealthSettings(req, ctx) {
      const actor = await viewers.actorIn(ctx, req.projectId);
      const { settings } = await relay(runs.getHealthSettings({ actor, projectId: req.projectId }));
      return { settings };
    },

    async updateHealthSettings(req, ctx) {
      const actor = await viewers.actorIn(ctx, req.projectId);
      const { settings } = await relay(
        runs.updateHealthSettings({ actor, projectId: req.projectId, settings: req.settings }),
      );
      return { settings };
    },
  };
}
