import type { Client, ServiceImpl } from "@connectrpc/connect";
import type { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import type { Viewers } from "../viewer.js";
import { relay } from "./relay.js";

export interface ContentHandlerDeps {
  viewers: Viewers;
  catalog: Client<typeof CatalogService>;
  billing: Client<typeof BillingService>;
}

/** ConsoleService's project content and credits: CatalogService and BillingService decide. */
export function contentHandlers(
  deps: ContentHandlerDeps,
): Pick<
  ServiceImpl<typeof ConsoleService>,
  | "listEnvironments"
  | "listTestPlans"
  | "getTestPlan"
  | "listTestCases"
  | "getTestCase"
  | "listVariables"
  | "setVariableValue"
  | "getCredits"
> {
  const { viewers, catalog, billing } = deps;

  return {
    async listEnvironments(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { environments } = await relay(catalog.listEnvironments({ actor, projectId: req.projectId }));
      return { environments };
    },

    async listTestPlans(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { testPlans } = await relay(catalog.listTestPlans({ actor, projectId: req.projectId }));
      return { testPlans };
    },

    async getTestPlan(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { projectId } = req;
      const { testPlan } = await relay(catalog.getTestPlan({ actor, projectId, testPlanId: req.testPlanId }));
      const ids = testPlan?.testCaseIds ?? [];
      if (ids.length === 0) return { testPlan, testCases: [] };
      // One read by id: a plan holds at most 500 test cases, as many as the list returns.
      const { testCases } = await relay(catalog.listTestCases({ actor, projectId, testCaseIds: ids }));
      const byId = new Map(testCases.map((c) => [c.id, c]));
      // In the plan's run order; a case deleted meanwhile is left out.
      return { testPlan, testCases: ids.flatMap((id) => byId.get(id) ?? []) };
    },

    async listTestCases(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { testCases, truncated } = await relay(
        catalog.listTestCases({
          actor,
          projectId: req.projectId,
          tags: req.tags,
          ...(req.search && { search: req.search }),
        }),
      );
      return { testCases, truncated };
    },

    async getTestCase(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { projectId } = req;
      // The catalog checks the version (kept or not) and says which versions are kept.
      const [{ testCase, currentVersion }, { testPlans }] = await Promise.all([
        relay(catalog.getTestCase({ actor, projectId, testCaseId: req.testCaseId, version: req.version })),
        relay(catalog.listTestPlans({ actor, projectId })),
      ]);
      return {
        testCase,
        currentVersion,
        testPlans: testPlans.filter((p) => p.testCaseIds.includes(req.testCaseId)),
      };
    },

    async listVariables(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { variables } = await relay(catalog.listVariables({ actor, projectId: req.projectId }));
      return { variables };
    },

    async setVariableValue(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { variable } = await relay(
        catalog.updateVariable({
          actor,
          projectId: req.projectId,
          variableId: req.variableId,
          value: req.value,
        }),
      );
      return { variable };
    },

    async getCredits(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { projectId } = req;
      const [{ balance }, ledger] = await Promise.all([
        relay(billing.getBalance({ actor, projectId })),
        relay(billing.listLedger({ actor, projectId, pageSize: req.pageSize, pageToken: req.pageToken })),
      ]);
      return { balance, entries: ledger.entries, nextPageToken: ledger.nextPageToken };
    },
  };
}
