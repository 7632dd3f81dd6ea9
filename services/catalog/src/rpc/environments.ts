import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { newId } from "@testrun/kit";
import { authorizeProject, authorizeProjectListings } from "../access.js";
import { notFound, Violations } from "../errors.js";
import { type EnvironmentRow, environmentColumns, environmentToProto } from "../rows.js";
import type { Sql } from "../sql.js";
import { checkBaseUrl, checkName } from "../validate.js";
import type { Deps, Handlers } from "./context.js";

const missing = (id: string) => notFound(`environment ${id || "(empty id)"} not found in this project`);

/**
 * Writes that may move the default lock the project's row first, so two of them cannot both make
 * a default (the partial unique index `environments_one_default_per_project` is the backstop).
 */
const lockProject = (sql: Sql, projectId: string) =>
  sql.all("select id from catalog.projects where id = ? for update", [projectId]);

/** The project's default environment stops being it (before another becomes it; ImportContent too). */
export const clearDefault = (sql: Sql, projectId: string, now: Date) =>
  sql.all(
    "update catalog.environments set is_default = false, updated_at = ? where project_id = ? and is_default",
    [now, projectId],
  );

async function findEnvironment(sql: Sql, projectId: string, id: string): Promise<EnvironmentRow> {
  const row = await sql.one<EnvironmentRow>(
    `select ${environmentColumns} from catalog.environments e where e.project_id = ? and e.id = ?`,
    [projectId, id],
  );
  if (!row) throw missing(id);
  return row;
}

/** CreateEnvironment, GetEnvironment, ListEnvironments, UpdateEnvironment, DeleteEnvironment. */
export function environmentHandlers({ db }: Deps): Handlers {
  return {
    async createEnvironment(req) {
      const violations = new Violations();
      const name = checkName(req.name, "name", violations);
      const baseUrl = checkBaseUrl(req.baseUrl, "base_url", violations);
      const row = await db.write(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
        violations.check();
        await lockProject(sql, project.id);
        const now = new Date();
        if (req.isDefault) await clearDefault(sql, project.id, now);
        return sql.one<EnvironmentRow>(
          `insert into catalog.environments as e (id, project_id, name, base_url, is_default, created_at, updated_at)
           values (?, ?, ?, ?, ?, ?, ?) returning ${environmentColumns}`,
          [newId("env"), project.id, name, baseUrl, req.isDefault, now, now],
        );
      });
      return { environment: environmentToProto(row as EnvironmentRow) };
    },

    async getEnvironment(req) {
      const row = await db.read(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.READ);
        return findEnvironment(sql, project.id, req.environmentId);
      });
      return { environment: environmentToProto(row) };
    },

    async listEnvironments(req) {
      // One statement: the most frequent list read of pipelines (docs/development.md, "Benchmarks").
      const { rows } = await db.read((sql) =>
        authorizeProjectListings<{ environments: EnvironmentRow }>(
          sql,
          req.actor,
          req.projectId,
          Permission.READ,
          {
            environments: {
              select: `select ${environmentColumns} from catalog.environments e where e.project_id = p.id`,
              orderBy: "created_at, id",
            },
          },
        ),
      );
      return { environments: rows.environments.map(environmentToProto) };
    },

    async updateEnvironment(req) {
      const violations = new Violations();
      const name = req.name === undefined ? undefined : checkName(req.name, "name", violations);
      const baseUrl =
        req.baseUrl === undefined ? undefined : checkBaseUrl(req.baseUrl, "base_url", violations);
      const row = await db.write(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
        await lockProject(sql, project.id);
        const current = await findEnvironment(sql, project.id, req.environmentId);
        violations.check();
        if (name === undefined && baseUrl === undefined && req.isDefault === undefined) return current;
        const now = new Date();
        if (req.isDefault === true && !current.is_default) await clearDefault(sql, project.id, now);
        return sql.one<EnvironmentRow>(
          `update catalog.environments e set name = coalesce(?, e.name), base_url = coalesce(?, e.base_url),
             is_default = coalesce(?, e.is_default), updated_at = ?
           where e.id = ? returning ${environmentColumns}`,
          [name ?? null, baseUrl ?? null, req.isDefault ?? null, now, current.id],
        );
      });
      return { environment: environmentToProto(row as EnvironmentRow) };
    },

    async deleteEnvironment(req) {
      await db.write(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
        const deleted = await sql.all(
          "delete from catalog.environments where project_id = ? and id = ? returning id",
          [project.id, req.environmentId],
        );
        if (deleted.length === 0) throw missing(req.environmentId);
      });
      return {};
    },
  };
}
