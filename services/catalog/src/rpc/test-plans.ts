import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { newId } from "@testrun/kit";
import { authorizeProject } from "../access.js";
import { notFound, Violations } from "../errors.js";
import { type TestPlanRow, testPlanColumns, testPlanToProto } from "../rows.js";
import { type Sql, textArray } from "../sql.js";
import { checkDescription, checkName } from "../validate.js";
import type { Deps, Handlers } from "./context.js";
import { testPlansOf } from "./projects.js";

/** The most test cases one run holds, and so one plan. */
export const maxCases = 500;

const missing = (id: string) => notFound(`test plan ${id || "(empty id)"} not found in this project`);

/** A plan's test cases: distinct, at most 500. */
export function checkCaseIds(ids: readonly string[], field: string, violations: Violations): void {
  if (ids.length > maxCases)
    violations.add(field, `must hold at most ${maxCases} test cases (got ${ids.length})`);
  const first = new Map<string, number>();
  ids.forEach((id, index) => {
    const earlier = first.get(id);
    if (earlier === undefined) first.set(id, index);
    else
      violations.add(
        `${field}[${index}]`,
        `repeats ${field}[${earlier}] (${id}); a plan lists a test case once`,
      );
  });
}

/**
 * NOT_FOUND naming the first id that is not a test case of the project. The cases found are locked
 * (for share) so that none is deleted before the plan referencing it commits.
 */
async function requireCasesOf(sql: Sql, projectId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const found = await sql.all<{ id: string }>(
    "select id from catalog.test_cases where project_id = ? and id = any(?::text[]) for share",
    [projectId, textArray(ids)],
  );
  const known = new Set(found.map((row) => row.id));
  const unknown = ids.find((id) => !known.has(id));
  if (unknown !== undefined) throw notFound(`${unknown || "(empty id)"} is not a test case of this project`);
}

async function replaceCases(sql: Sql, planId: string, ids: readonly string[]): Promise<void> {
  await sql.all("delete from catalog.test_plan_cases where plan_id = ?", [planId]);
  if (ids.length === 0) return;
  await sql.all(
    `insert into catalog.test_plan_cases (plan_id, position, test_case_id)
     select ?, t.position - 1, t.id from unnest(?::text[]) with ordinality as t(id, position)`,
    [planId, textArray(ids)],
  );
}

/** The plan; `lock` holds it until the transaction ends, so concurrent updates of it take turns. */
async function findPlan(sql: Sql, projectId: string, id: string, lock = false): Promise<TestPlanRow> {
  const row = await sql.one<TestPlanRow>(
    `select ${testPlanColumns} from catalog.test_plans tp where tp.project_id = ? and tp.id = ?${lock ? " for update" : ""}`,
    [projectId, id],
  );
  if (!row) throw missing(id);
  return row;
}

/** A test plan's fields, checked: what creating and changing one write. */
export interface TestPlanFields {
  name: string;
  description: string;
  /** Test cases of the plan's project (the caller checked), in run order. */
  testCaseIds: readonly string[];
}

/**
 * Checks a new test plan's name and description (CreateTestPlan, each plan of ImportContent),
 * adding every violation under `prefix` (`""`, `test_plans[1].`).
 */
export function checkTestPlan(
  input: { name: string; description: string },
  prefix: string,
  violations: Violations,
): Omit<TestPlanFields, "testCaseIds"> {
  return {
    name: checkName(input.name, `${prefix}name`, violations),
    description: checkDescription(input.description, `${prefix}description`, violations),
  };
}

/** Creates a test plan of checked fields: the one statement that does (CreateTestPlan, ImportContent). */
export async function insertTestPlan(sql: Sql, projectId: string, fields: TestPlanFields): Promise<string> {
  const id = newId("pln");
  const now = new Date();
  await sql.all(
    `insert into catalog.test_plans (id, project_id, name, description, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?)`,
    [id, projectId, fields.name, fields.description, now, now],
  );
  await replaceCases(sql, id, fields.testCaseIds);
  return id;
}

/**
 * Changes the given fields (checked) of a test plan, the rest as they are: the one place that
 * changes a test plan (UpdateTestPlan, ImportContent). Callers leave out what did not change and
 * do not call it for nothing.
 */
export async function changeTestPlan(sql: Sql, id: string, changes: Partial<TestPlanFields>): Promise<void> {
  if (changes.testCaseIds) await replaceCases(sql, id, changes.testCaseIds);
  await sql.all(
    `update catalog.test_plans set name = coalesce(?, name), description = coalesce(?, description),
       updated_at = ? where id = ?`,
    [changes.name ?? null, changes.description ?? null, new Date(), id],
  );
}

/** CreateTestPlan, GetTestPlan, ListTestPlans, UpdateTestPlan, DeleteTestPlan. */
export function testPlanHandlers({ db }: Deps): Handlers {
  return {
    async createTestPlan(req) {
      const violations = new Violations();
      const { name, description } = checkTestPlan(req, "", violations);
      checkCaseIds(req.testCaseIds, "test_case_ids", violations);
      const row = await db.write(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
        violations.check();
        await requireCasesOf(sql, project.id, req.testCaseIds);
        const id = await insertTestPlan(sql, project.id, {
          name,
          description,
          testCaseIds: req.testCaseIds,
        });
        return findPlan(sql, project.id, id);
      });
      return { testPlan: testPlanToProto(row) };
    },

    async getTestPlan(req) {
      const row = await db.read(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.READ);
        return findPlan(sql, project.id, req.testPlanId);
      });
      return { testPlan: testPlanToProto(row) };
    },

    async listTestPlans(req) {
      const rows = await db.read(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.READ);
        return testPlansOf(sql, project.id);
      });
      return { testPlans: rows.map(testPlanToProto) };
    },

    async updateTestPlan(req) {
      const violations = new Violations();
      const name = req.name === undefined ? undefined : checkName(req.name, "name", violations);
      const description =
        req.description === undefined
          ? undefined
          : checkDescription(req.description, "description", violations);
      const ids = req.testCaseIds?.ids;
      if (ids) checkCaseIds(ids, "test_case_ids.ids", violations);
      const row = await db.write(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
        const current = await findPlan(sql, project.id, req.testPlanId, true);
        violations.check();
        if (name === undefined && description === undefined && ids === undefined) return current;
        if (ids) await requireCasesOf(sql, project.id, ids);
        await changeTestPlan(sql, current.id, { name, description, testCaseIds: ids });
        return findPlan(sql, project.id, current.id);
      });
      return { testPlan: testPlanToProto(row) };
    },

    async deleteTestPlan(req) {
      await db.write(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
        const deleted = await sql.all(
          "delete from catalog.test_plans where project_id = ? and id = ? returning id",
          [project.id, req.testPlanId],
        );
        if (deleted.length === 0) throw missing(req.testPlanId);
      });
      return {};
    },
  };
}
