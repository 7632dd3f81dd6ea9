import { authorizeProject } from "../access.js";
import type { Deps, Handlers } from "./context.js";

/** CheckAccess: the same check every project-scoped RPC of the catalog makes, for other services. */
export function checkAccessHandlers({ db }: Deps): Handlers {
  return {
    async checkAccess(req) {
      const { project, role } = await db.read((sql) =>
        authorizeProject(sql, req.actor, req.projectId, req.permission),
      );
      return { organizationId: project.organization_id, role };
    },
  };
}
