import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { newId } from "@testrun/kit";
import { authorizeOrganization, authorizeProject } from "../access.js";
import { alreadyExists, Violations } from "../errors.js";
import { pageOf, readPage } from "../paging.js";
import {
  type EnvironmentRow,
  environmentColumns,
  environmentToProto,
  type ProjectRow,
  projectColumns,
  projectToProto,
  type TestPlanRow,
  testPlanColumns,
  testPlanToProto,
} from "../rows.js";
import { type Sql, violatesUnique } from "../sql.js";
import { checkDescription, checkName } from "../validate.js";
import type { Deps, Handlers } from "./context.js";

const nameTaken = (name: string) =>
  alreadyExists(`the organization already has a project named "${name}" (names are compared ignoring case)`);

/** A project's environments, oldest first. */
export const environmentsOf = (sql: Sql, projectId: string) =>
  sql.all<EnvironmentRow>(
    `select ${environmentColumns} from catalog.environments e where e.project_id = ? order by e.created_at, e.id`,
    [projectId],
  );

/** A project's test plans with their test cases, oldest first. */
export const testPlansOf = (sql: Sql, projectId: string) =>
  sql.all<TestPlanRow>(
    `select ${testPlanColumns} from catalog.test_plans tp where tp.project_id = ? order by tp.created_at, tp.id`,
    [projectId],
  );

/** CreateProject, GetProject, ListProjects, UpdateProject, DeleteProject. */
export function projectHandlers({
  db,
  outbox,
  announceAccessChange,
  logger,
  newProjectCredits,
  newProjectGrantsPerOrganization,
}: Deps): Handlers {
  /**
   * Takes one of the organization's NEW_PROJECT_GRANTS_PER_ORGANIZATION grants, if one is left.
   * One statement: of two CreateProjects at the bound, PostgreSQL makes the second wait for the
   * first's commit and evaluates `new_project_grants < ?` again on the counted row, so only one
   * passes. Rolled back with the project when its insert fails (a name taken).
   */
  const takeNewProjectGrant = async (sql: Sql, organizationId: string): Promise<boolean> =>
    newProjectCredits > 0 &&
    (
      await sql.all(
        `update catalog.organizations set new_project_grants = new_project_grants + 1
       where id = ? and new_project_grants < ? returning new_project_grants`,
        [organizationId, newProjectGrantsPerOrganization],
      )
    ).length === 1;

  return {
    async createProject(req) {
      const violations = new Violations();
      const name = checkName(req.name, "name", violations);
      const description = checkDescription(req.description, "description", violations);
      try {
        const { project, queued } = await db.write(async (sql) => {
          await authorizeOrganization(sql, req.actor, req.organizationId, true);
          violations.check();
          const now = new Date();
          const project = (await sql.one<ProjectRow>(
            `insert into catalog.projects as p (id, organization_id, name, description, created_at, updated_at)
             values (?, ?, ?, ?, ?, ?) returning ${projectColumns}`,
            [newId("prj"), req.organizationId, name, description, now, now],
          )) as ProjectRow;
          // Its first credits, in the same transaction: granted once even if the catalog stops
          // right after the commit (the outbox's retry loop then delivers them). Past the
          // organization's bound the project starts with none, as with NEW_PROJECT_CREDITS 0.
          if (!(await takeNewProjectGrant(sql, req.organizationId))) {
            if (newProjectCredits > 0)
              logger.info(
                { organization_id: req.organizationId, project_id: project.id },
                `the organization has had its ${newProjectGrantsPerOrganization} new-project grants (NEW_PROJECT_GRANTS_PER_ORGANIZATION): the project starts without credits`,
              );
            return { project, queued: [] };
          }
          return { project, queued: await outbox.enqueueNewProjectGrant(sql, project.id, newProjectCredits) };
        });
        // Delivered before answering, so the project can start a run as soon as it exists.
        await outbox.deliver(queued);
        return { project: projectToProto(project) };
      } catch (error) {
        if (violatesUnique(error, "projects_organization_name_unique")) throw nameTaken(name);
        throw error;
      }
    },

    async getProject(req) {
      return db.read(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.READ);
        if (!req.includeContents) return { project: projectToProto(project) };
        const [environments, testPlans] = [
          await environmentsOf(sql, project.id),
          await testPlansOf(sql, project.id),
        ];
        return {
          project: projectToProto(project),
          environments: environments.map(environmentToProto),
          testPlans: testPlans.map(testPlanToProto),
        };
      });
    },

    async listProjects(req) {
      const { items, nextPageToken } = await db.read(async (sql) => {
        await authorizeOrganization(sql, req.actor, req.organizationId, false);
        const page = readPage(req.pageSize, req.pageToken, "p");
        const rows = await sql.all<ProjectRow>(
          `select ${projectColumns} from catalog.projects p where p.organization_id = ? and ${page.after.where}
           order by p.created_at, p.id limit ?`,
          [req.organizationId, ...page.after.params, page.limit],
        );
        return pageOf(rows, page);
      });
      return { projects: items.map(projectToProto), nextPageToken };
    },

    async updateProject(req) {
      const violations = new Violations();
      const name = req.name === undefined ? undefined : checkName(req.name, "name", violations);
      const description =
        req.description === undefined
          ? undefined
          : checkDescription(req.description, "description", violations);
      try {
        const project = await db.write(async (sql) => {
          const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.ADMIN);
          violations.check();
          if (name === undefined && description === undefined) return project;
          return sql.one<ProjectRow>(
            `update catalog.projects p set name = coalesce(?, p.name), description = coalesce(?, p.description),
               updated_at = ?
             where p.id = ? returning ${projectColumns}`,
            [name ?? null, description ?? null, new Date(), project.id],
          );
        });
        return { project: projectToProto(project as ProjectRow) };
      } catch (error) {
        if (name !== undefined && violatesUnique(error, "projects_organization_name_unique"))
          throw nameTaken(name);
        throw error;
      }
    },

    async deleteProject(req) {
      const queued = await db.write(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.ADMIN);
        // Environments, plans, test cases and variables go with it (on delete cascade); its keys
        // and its runs' artifacts are the keys and runs services' (outbox.ts).
        await sql.all("delete from catalog.projects where id = ?", [project.id]);
        return outbox.enqueueProjectDeletion(sql, project.id);
      });
      await announceAccessChange();
      await outbox.deliver(queued);
      return {};
    },
  };
}
