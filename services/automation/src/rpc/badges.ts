import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Client, ServiceImpl } from "@connectrpc/connect";
import {
  type AutomationService,
  type Badge,
  BadgeSchema,
  BadgeState,
} from "@testrun/gen/testrun/automation/v1/automation_pb";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { dbDate, newId, type Orm } from "@testrun/kit";
import { authorize } from "../access.js";
import { exhausted, invalid, maxBadges, notFound } from "../errors.js";
import { newBadgeToken } from "../secrets.js";

interface BadgeRow {
  id: string;
  project_id: string;
  test_plan_id: string;
  environment_id: string;
  token: string;
  created_at: Date | string;
}

export interface BadgeDeps {
  orm: Orm;
  catalog: Client<typeof CatalogService>;
  appUrl: string;
}

/** CreateBadge, ListBadges, RevokeBadge, GetBadgeState (automation.proto). */
export function badgeHandlers(deps: BadgeDeps): Partial<ServiceImpl<typeof AutomationService>> {
  const em = () => deps.orm.em.fork();
  const proto = (row: BadgeRow): Badge =>
    create(BadgeSchema, {
      id: row.id,
      projectId: row.project_id,
      testPlanId: row.test_plan_id,
      environmentId: row.environment_id,
      url: `${deps.appUrl}/badges/${row.token}.svg`,
      createdAt: timestampFromDate(dbDate(row.created_at)),
    });
  return {
    async createBadge(req) {
      await authorize(deps.catalog, req.actor, req.projectId, true);
      if (!req.testPlanId) throw invalid("test_plan_id", "is required");
      if (!req.environmentId) throw invalid("environment_id", "is required");
      // Both must exist in the project: the catalog resolves them (read rights suffice to name them).
      const [plan, environment] = await Promise.all([
        deps.catalog
          .getTestPlan({ actor: req.actor, projectId: req.projectId, testPlanId: req.testPlanId })
          .catch(() => undefined),
        deps.catalog
          .getEnvironment({ actor: req.actor, projectId: req.projectId, environmentId: req.environmentId })
          .catch(() => undefined),
      ]);
      if (!plan) throw notFound("test plan");
      if (!environment) throw notFound("environment");
      const id = newId("bdg");
      const rows = await em().transactional(async (tx) => {
        await tx.execute("select pg_advisory_xact_lock(hashtext(?))", [`automation.badges/${req.projectId}`]);
        const [{ count }] = (await tx.execute(
          "select count(*)::int as count from automation.badges where project_id = ? and revoked_at is null",
          [req.projectId],
        )) as [{ count: number }];
        if (count >= maxBadges) throw exhausted(`a project has at most ${maxBadges} badges`);
        return tx.execute<BadgeRow[]>(
          `insert into automation.badges (id, project_id, test_plan_id, environment_id, token, created_at)
           values (?, ?, ?, ?, ?, now()) returning *`,
          [id, req.projectId, req.testPlanId, req.environmentId, newBadgeToken()],
        );
      });
      return { badge: proto(rows[0] as BadgeRow) };
    },

    async listBadges(req) {
      await authorize(deps.catalog, req.actor, req.projectId, false);
      const rows = await em().execute<BadgeRow[]>(
        "select * from automation.badges where project_id = ? and revoked_at is null order by created_at, id limit ?",
        [req.projectId, maxBadges],
      );
      return { badges: rows.map(proto) };
    },

    async revokeBadge(req) {
      await authorize(deps.catalog, req.actor, req.projectId, true);
      const rows = await em().execute(
        "update automation.badges set revoked_at = now() where id = ? and project_id = ? and revoked_at is null returning id",
        [req.badgeId, req.projectId],
      );
      if (rows.length === 0) throw notFound("badge");
      return {};
    },

    async getBadgeState(req) {
      if (!req.token || req.token.length > 100) throw notFound("badge");
      const rows = await em().execute<{ state: "passing" | "failing" | null }[]>(
        `select s.state from automation.badges b
           left join automation.plan_states s
             on s.project_id = b.project_id and s.selection_key = b.test_plan_id and s.environment_id = b.environment_id
         where b.token = ? and b.revoked_at is null`,
        [req.token],
      );
      const row = rows[0];
      if (!row) throw notFound("badge");
      return {
        state:
          row.state === "passing"
            ? BadgeState.PASSING
            : row.state === "failing"
              ? BadgeState.FAILING
              : BadgeState.UNKNOWN,
      };
    },
  };
}
