import type { Client, ServiceImpl } from "@connectrpc/connect";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { actorOf, type Viewers } from "../viewer.js";
import { relay } from "./relay.js";

export interface AuthoringHandlerDeps {
  viewers: Viewers;
  catalog: Client<typeof CatalogService>;
}

/**
 * ConsoleService's authoring of projects, environments, variables, test plans and test cases. Each
 * call goes to the
 * catalog with the signed-in member as actor: the catalog checks the role and validates the
 * fields, and its refusals (FieldViolations details included) reach the browser as it worded them.
 * Variable values pass through to the catalog and are never logged or returned.
 */
export function authoringHandlers(
  deps: AuthoringHandlerDeps,
): Pick<
  ServiceImpl<typeof ConsoleService>,
  | "createProject"
  | "updateProject"
  | "deleteProject"
  | "createEnvironment"
  | "updateEnvironment"
  | "deleteEnvironment"
  | "createTestPlan"
  | "updateTestPlan"
  | "deleteTestPlan"
  | "createVariable"
  | "deleteVariable"
  | "listVariableUses"
  | "createTestCase"
  | "updateTestCase"
  | "deleteTestCase"
> {
  const { viewers, catalog } = deps;

  return {
    async createProject(req, ctx) {
      const membership = viewers.membershipIn(await viewers.of(ctx), req.organizationId);
      const { project } = await relay(
        catalog.createProject({
          actor: actorOf(membership),
          organizationId: req.organizationId,
          name: req.name,
          description: req.description,
        }),
      );
      return { project };
    },

    async updateProject(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { project } = await relay(
        catalog.updateProject({
          actor,
          projectId: req.projectId,
          name: req.name,
          description: req.description,
        }),
      );
      return { project };
    },

    async deleteProject(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      await relay(catalog.deleteProject({ actor, projectId: req.projectId }));
      return {};
    },

    async createEnvironment(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { environment } = await relay(
        catalog.createEnvironment({
          actor,
          projectId: req.projectId,
          name: req.name,
          baseUrl: req.baseUrl,
          isDefault: req.isDefault,
        }),
      );
      return { environment };
    },

    async updateEnvironment(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { environment } = await relay(
        catalog.updateEnvironment({
          actor,
          projectId: req.projectId,
          environmentId: req.environmentId,
          name: req.name,
          baseUrl: req.baseUrl,
          isDefault: req.isDefault,
        }),
      );
      return { environment };
    },

    async deleteEnvironment(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      await relay(
        catalog.deleteEnvironment({ actor, projectId: req.projectId, environmentId: req.environmentId }),
      );
      return {};
    },

    async createTestPlan(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { testPlan } = await relay(
        catalog.createTestPlan({
          actor,
          projectId: req.projectId,
          name: req.name,
          description: req.description,
          testCaseIds: req.testCaseIds,
          retries: req.retries,
        }),
      );
      return { testPlan };
    },

    async updateTestPlan(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { testPlan } = await relay(
        catalog.updateTestPlan({
          actor,
          projectId: req.projectId,
          testPlanId: req.testPlanId,
          name: req.name,
          description: req.description,
          testCaseIds: req.testCaseIds,
          expectedVersion: req.expectedVersion,
          retries: req.retries,
        }),
      );
      return { testPlan };
    },

    async deleteTestPlan(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { projectId, testPlanId, expectedVersion } = req;
      await relay(catalog.deleteTestPlan({ actor, projectId, testPlanId, expectedVersion }));
      return {};
    },

    async createVariable(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { variable } = await relay(
        catalog.createVariable({ actor, projectId: req.projectId, name: req.name, value: req.value }),
      );
      return { variable };
    },

    async deleteVariable(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      await relay(catalog.deleteVariable({ actor, projectId: req.projectId, variableId: req.variableId }));
      return {};
    },

    async listVariableUses(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { projectId } = req;
      // GetVariable first: it checks the person may read variables and gives the name to look for.
      const { variable } = await relay(catalog.getVariable({ actor, projectId, variableId: req.variableId }));
      const { testCases, truncated } = await relay(
        catalog.listTestCases({ actor, projectId, usesVariable: variable?.name ?? "" }),
      );
      return { variable, testCases, truncated };
    },

    // Test cases: the catalog validates every step (step.proto) and names each bad field.
    async createTestCase(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { testCase } = await relay(
        catalog.createTestCase({
          actor,
          projectId: req.projectId,
          name: req.name,
          tags: req.tags,
          enabled: req.enabled,
          steps: req.steps,
          recordTrace: req.recordTrace,
          retries: req.retries,
          playwright: req.playwright,
        }),
      );
      return { testCase };
    },

    async updateTestCase(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { testCase } = await relay(
        catalog.updateTestCase({
          actor,
          projectId: req.projectId,
          testCaseId: req.testCaseId,
          name: req.name,
          tags: req.tags,
          enabled: req.enabled,
          steps: req.steps,
          expectedVersion: req.expectedVersion,
          recordTrace: req.recordTrace,
          retries: req.retries,
          playwright: req.playwright,
        }),
      );
      return { testCase };
    },

    async deleteTestCase(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { projectId, testCaseId, expectedVersion } = req;
      await relay(catalog.deleteTestCase({ actor, projectId, testCaseId, expectedVersion }));
      return {};
    },
  };
}
