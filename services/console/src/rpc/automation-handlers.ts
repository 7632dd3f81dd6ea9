import type { Client, ServiceImpl } from "@connectrpc/connect";
import type { AutomationService } from "@testrun/gen/testrun/automation/v1/automation_pb";
import type { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import type { Viewers } from "../viewer.js";
import { relay } from "./relay.js";

export interface AutomationHandlerDeps {
  viewers: Viewers;
  automation: Client<typeof AutomationService>;
}

/**
 * ConsoleService's schedules, webhooks and badges: each call goes to AutomationService with the
 * signed-in member as actor, which checks the role and validates; its refusals (FieldViolations
 * included) reach the browser as it worded them. Webhook secrets pass through to the browser once,
 * in the answer of CreateWebhook and RotateWebhookSecret, and are never logged (the call log holds
 * no message bodies).
 */
export function automationHandlers(
  deps: AutomationHandlerDeps,
): Pick<
  ServiceImpl<typeof ConsoleService>,
  | "listSchedules"
  | "getSchedule"
  | "previewSchedule"
  | "createSchedule"
  | "updateSchedule"
  | "deleteSchedule"
  | "listWebhooks"
  | "createWebhook"
  | "updateWebhook"
  | "deleteWebhook"
  | "rotateWebhookSecret"
  | "listDeliveries"
  | "redeliver"
  | "listBadges"
  | "createBadge"
  | "revokeBadge"
> {
  const { viewers, automation } = deps;

  return {
    async listSchedules(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { schedules } = await relay(automation.listSchedules({ actor, projectId: req.projectId }));
      return { schedules };
    },

    async getSchedule(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { schedule, recentTicks } = await relay(
        automation.getSchedule({ actor, projectId: req.projectId, scheduleId: req.scheduleId }),
      );
      return { schedule, recentTicks };
    },

    async previewSchedule(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { nextTicks } = await relay(
        automation.previewSchedule({
          actor,
          projectId: req.projectId,
          cron: req.cron,
          timeZone: req.timeZone,
        }),
      );
      return { nextTicks };
    },

    async createSchedule(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { schedule } = await relay(
        automation.createSchedule({
          actor,
          projectId: req.projectId,
          name: req.name,
          cron: req.cron,
          timeZone: req.timeZone,
          environmentId: req.environmentId,
          selection: req.selection,
          paused: req.paused,
        }),
      );
      return { schedule };
    },

    async updateSchedule(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { schedule } = await relay(
        automation.updateSchedule({
          actor,
          projectId: req.projectId,
          scheduleId: req.scheduleId,
          name: req.name,
          cron: req.cron,
          timeZone: req.timeZone,
          environmentId: req.environmentId,
          selection: req.selection,
          paused: req.paused,
        }),
      );
      return { schedule };
    },

    async deleteSchedule(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      await relay(automation.deleteSchedule({ actor, projectId: req.projectId, scheduleId: req.scheduleId }));
      return {};
    },

    async listWebhooks(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { webhooks } = await relay(automation.listWebhooks({ actor, projectId: req.projectId }));
      return { webhooks };
    },

    async createWebhook(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { webhook, secret } = await relay(
        automation.createWebhook({
          actor,
          projectId: req.projectId,
          url: req.url,
          kind: req.kind,
          events: req.events,
          notifyMode: req.notifyMode,
        }),
      );
      return { webhook, secret };
    },

    async updateWebhook(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { webhook } = await relay(
        automation.updateWebhook({
          actor,
          projectId: req.projectId,
          webhookId: req.webhookId,
          url: req.url,
          events: req.events,
          notifyMode: req.notifyMode,
          paused: req.paused,
        }),
      );
      return { webhook };
    },

    async deleteWebhook(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      await relay(automation.deleteWebhook({ actor, projectId: req.projectId, webhookId: req.webhookId }));
      return {};
    },

    async rotateWebhookSecret(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { webhook, secret } = await relay(
        automation.rotateWebhookSecret({ actor, projectId: req.projectId, webhookId: req.webhookId }),
      );
      return { webhook, secret };
    },

    async listDeliveries(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { deliveries, nextPageToken } = await relay(
        automation.listDeliveries({
          actor,
          projectId: req.projectId,
          webhookId: req.webhookId,
          pageSize: req.pageSize,
          pageToken: req.pageToken,
        }),
      );
      return { deliveries, nextPageToken };
    },

    async redeliver(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { delivery } = await relay(
        automation.redeliver({ actor, projectId: req.projectId, deliveryId: req.deliveryId }),
      );
      return { delivery };
    },

    async listBadges(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { badges } = await relay(automation.listBadges({ actor, projectId: req.projectId }));
      return { badges };
    },

    async createBadge(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { badge } = await relay(
        automation.createBadge({
          actor,
          projectId: req.projectId,
          testPlanId: req.testPlanId,
          environmentId: req.environmentId,
        }),
      );
      return { badge };
    },

    async revokeBadge(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      await relay(automation.revokeBadge({ actor, projectId: req.projectId, badgeId: req.badgeId }));
      return {};
    },
  };
}
