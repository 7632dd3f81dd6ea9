import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { newId } from "@testrun/kit";
import { authorizeProject } from "../access.js";
import { notFound, Violations } from "../errors.js";
import { changedByJson, type TestPlanRow, testPlanColumns, testPlanToProto } from "../rows.js";
import { type Sql, textArray } from "../sql.js";
import { checkDescription, checkName, checkRetries } from "../validate.js";
import {
  type Changer,
  changerOf,
  checkReadVersion,
  checkVersion,
  conflictIf,
  recordPlanVersions,
  versionMissing,
} from "../versions.js";
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
 * (for share) so that none is deleted before the plan referencing it commits. Called before the
 * plan is locked: DeleteTestCase locks in the same order (the test case, then its plans).
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

const named = (id: string) => `test plan ${id}`;

/** Version `version` of a plan as it was stored, and the version it is at now (as findCaseVersion). */
async function findPlanVersion(
  sql: Sql,
  projectId: string,
  id: string,
  version: number,
): Promise<{ row: TestPlanRow; current: number }> {
  const found = await sql.one<TestPlanRow & { current_version: number }>(
    `select tp.id, tp.project_id, v.name, v.description, v.test_case_ids, v.retries, tp.created_at, v.changed_at as updated_at,
       v.version, ${changedByJson} as updated_by, tp.version as current_version
     from catalog.test_plans tp
     left join catalog.test_plan_versions v on v.plan_id = tp.id and v.version = ?
     left join catalog.members m on m.id = v.changed_by_member_id
     where tp.project_id = ? and tp.id = ?`,
    [version, projectId, id],
  );
  if (!found) throw missing(id);
  if (found.version === null) throw versionMissing(named(id), version, found.current_version);
  return { row: found, current: found.current_version };
}

const sameIds = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((id, index) => id === b[index]);

/** A test plan's fields, checked: what creating and changing one write. */
export interface TestPlanFields {
  name: string;
  description: string;
  /** Test cases of the plan's project (the caller checked), in run order. */
  testCaseIds: readonly string[];
  /** 0 to 3 (checkRetries), or null: the plan sets none, each test case's own apply. */
  retries: number | null;
}

/** A plan's retries as given (unset: none), checked. */
export const checkPlanRetries = (
  value: number | undefined,
  field: string,
  violations: Violations,
): number | null => (value === undefined ? null : checkRetries(value, field, violations));

/**
 * Checks a new test plan's name, description and retries (CreateTestPlan, each plan of
 * ImportContent), adding every violation under `prefix` (`""`, `test_plans[1].`).
 */
export function checkTestPlan(
  input: { name: string; description: string; retries?: number },
  prefix: string,
  violations: Violations,
): Omit<TestPlanFields, "testCaseIds"> {
  return {
    name: checkName(input.name, `${prefix}name`, violations),
    description: checkDescription(input.description, `${prefix}description`, violations),
    retries: checkPlanRetries(input.retries, `${prefix}retries`, violations),
  };
}

/**
 * Creates a test plan of checked fields, at version 1 with its snapshot, in the caller's
 * transaction: the one place that does (CreateTestPlan, ImportContent). Returns its id.
 */
export async function insertTestPlan(
  sql: Sql,
  projectId: string,
  fields: TestPlanFields,
  changer: Changer,
): Promise<string> {
  const id = newId("pln");
  const now = new Date();
  await sql.all(
    `insert into catalog.test_plans (id, project_id, name, description, retries, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?)`,
    [id, projectId, fields.name, fields.description, fields.retries, now, now],
  );
  await replaceCases(sql, id, fields.testCaseIds);
  await recordPlanVersions(sql, [id], changer);
  return id;
}

/**
 * Changes the given fields (checked) of a test plan, the rest as they are: the one place that
 * changes a test plan (UpdateTestPlan, ImportContent). The plan's test cases live in another
 * table, so the plan is locked first and read as it now is; `expectedVersion` (when given) is
 * checked on that, and the update writes only on the version it was checked at. Concurrent
 * changes of the plan take turns on the lock: of two saves made on one version exactly one is
 * stored. A change that changes nothing stores nothing and keeps the version.
 */
export async function changeTestPlan(
  sql: Sql,
  projectId: string,
  id: string,
  changes: Partial<TestPlanFields>,
  changer: Changer,
  expectedVersion?: number,
): Promise<void> {
  const current = await findPlan(sql, projectId, id, true);
  const conflict = conflictIf(named(current.id), expectedVersion, current);
  if (conflict) throw conflict;
  const next = {
    name: changes.name ?? current.name,
    description: changes.description ?? current.description,
    ids: changes.testCaseIds ?? current.test_case_ids,
    // undefined keeps the plan's; null clears it.
    retries: changes.retries === undefined ? current.retries : changes.retries,
  };
  if (
    next.name === current.name &&
    next.description === current.description &&
    sameIds(next.ids, current.test_case_ids) &&
    next.retries === current.retries
  )
    return;
  const stored = await sql.all(
    `update catalog.test_plans set name = ?, description = ?, retries = ?, updated_at = ?, version = version + 1
     where id = ? and version = ? returning id`,
    [next.name, next.description, next.retries, new Date(), current.id, current.version],
  );
  if (stored.length !== 1) throw new Error(`test plan ${current.id} changed while locked`);
  if (changes.testCaseIds) await replaceCases(sql, current.id, changes.testCaseIds);
  await recordPlanVersions(sql, [current.id], changer);
}

/** CreateTestPlan, GetTestPlan, ListTestPlans, UpdateTestPlan, DeleteTestPlan. */
export function testPlanHandlers({ db }: Deps): Handlers {
  return {
    async createTestPlan(req) {
      const violations = new Violations();
      const { name, description, retries } = checkTestPlan(req, "", violations);
      checkCaseIds(req.testCaseIds, "test_case_ids", violations);
      const row = await db.write(async (sql) => {
        const grant = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
        const { project } = grant;
        violations.check();
        await requireCasesOf(sql, project.id, req.testCaseIds);
        const id = await insertTestPlan(
          sql,
          project.id,
          { name, description, testCaseIds: req.testCaseIds, retries },
          changerOf(grant, req.actor),
        );
        return findPlan(sql, project.id, id);
      });
      return { testPlan: testPlanToProto(row) };
    },

    async getTestPlan(req) {
      checkReadVersion(req.version);
      const { row, current } = await db.read(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.READ);
        if (req.version !== undefined) return findPlanVersion(sql, project.id, req.testPlanId, req.version);
        const found = await findPlan(sql, project.id, req.testPlanId);
        return { row: found, current: found.version };
      });
      return { testPlan: testPlanToProto(row), currentVersion: current };
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
      // Set: the plan's new retries (PlanRetries.retries unset clears them); unset: kept.
      const retries =
        req.retries === undefined
          ? undefined
          : checkPlanRetries(req.retries.retries, "retries.retries", violations);
      const expected = req.expectedVersion;
      checkVersion(expected, "expected_version", violations);
      const row = await db.write(async (sql) => {
        const grant = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
        const { project } = grant;
        const seen = await findPlan(sql, project.id, req.testPlanId);
        violations.check();
        // A save on an old version is told so first, before its test cases are checked: one of
        // them may be a test case deleted since, whose deletion made the plan's new version.
        const stale = conflictIf(named(seen.id), expected, seen);
        if (stale) throw stale;
        if (ids) await requireCasesOf(sql, project.id, ids);
        await changeTestPlan(
          sql,
          project.id,
          seen.id,
          { name, description, testCaseIds: ids, retries },
          changerOf(grant, req.actor),
          expected,
        );
        return findPlan(sql, project.id, seen.id);
      });
      return { testPlan: testPlanToProto(row) };
    },

    async deleteTestPlan(req) {
      const violations = new Violations();
      checkVersion(req.expectedVersion, "expected_version", violations);
      violations.check();
      await db.write(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
        // The version check and the deletion are one statement; its kept versions go with it.
        const deleted = await sql.all(
          `delete from catalog.test_plans where project_id = ? and id = ? and (?::int is null or version = ?::int)
           returning id`,
          [project.id, req.testPlanId, req.expectedVersion ?? null, req.expectedVersion ?? null],
        );
        if (deleted.length > 0) return;
        const current = await findPlan(sql, project.id, req.testPlanId);
        throw conflictIf(named(current.id), req.expectedVersion, current) ?? missing(req.testPlanId);
      });
      return {};
    },
  };
}
