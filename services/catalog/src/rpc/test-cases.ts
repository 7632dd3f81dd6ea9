import type { JsonValue } from "@bufbuild/protobuf";
import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { PlaywrightSpec } from "@testrun/gen/testrun/catalog/v1/playwright_pb";
import type { Step } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { newId } from "@testrun/kit";
import { authorizeProject } from "../access.js";
import { notFound, Violations } from "../errors.js";
import { checkSpec } from "../playwright.js";
import { changedByJson, type TestCaseRow, testCaseColumns, testCaseToProto } from "../rows.js";
import { type Sql, textArray } from "../sql.js";
import { checkSteps } from "../steps.js";
import { checkName, checkRetries, checkTags, checkVariableName } from "../validate.js";
import {
  type Changer,
  changerOf,
  checkReadVersion,
  checkVersion,
  conflictIf,
  editConflict,
  recordCaseVersions,
  recordPlanVersions,
  versionMissing,
} from "../versions.js";
import type { Deps, Handlers } from "./context.js";

/** The most test cases a list returns (GET /v1/test-cases), and the most one run holds. */
export const listLimit = 500;

const missing = (id: string) => notFound(`test case ${id || "(empty id)"} not found in this project`);

/**
 * SQL condition keeping test cases (aliased `t`) that have any of `tags`, ignoring case. Both sides
 * are lower-cased by PostgreSQL (tags_lower is kept by a trigger), so they agree on what case means.
 */
export const anyTagCondition = "t.tags_lower && array(select lower(x) from unnest(?::text[]) as x)";

/** Tags of a filter or selection: surrounding space trimmed, empty ones ignored. */
export const filterTags = (tags: readonly string[]) =>
  tags.map((tag) => tag.trim()).filter((tag) => tag !== "");

async function findCase(sql: Sql, projectId: string, id: string): Promise<TestCaseRow> {
  const row = await sql.one<TestCaseRow>(
    `select ${testCaseColumns(true)} from catalog.test_cases t where t.project_id = ? and t.id = ?`,
    [projectId, id],
  );
  if (!row) throw missing(id);
  return row;
}

const named = (id: string) => `test case ${id}`;

/**
 * Version `version` of a test case as it was stored (the test case's own id, project and creation
 * time), and the version it is at now. NOT_FOUND for an unknown test case, or a version it never
 * had or no longer keeps.
 */
async function findCaseVersion(
  sql: Sql,
  projectId: string,
  id: string,
  version: number,
): Promise<{ row: TestCaseRow; current: number }> {
  const found = await sql.one<TestCaseRow & { current_version: number | null }>(
    `select t.id, t.project_id, v.name, v.tags, v.enabled, v.steps, v.playwright, v.record_trace, v.retries, t.created_at, v.changed_at as updated_at,
       v.version, ${changedByJson} as updated_by, t.version as current_version
     from catalog.test_cases t
     left join catalog.test_case_versions v on v.test_case_id = t.id and v.version = ?
     left join catalog.members m on m.id = v.changed_by_member_id
     where t.project_id = ? and t.id = ?`,
    [version, projectId, id],
  );
  if (!found) throw missing(id);
  const current = found.current_version as number;
  if (found.version === null) throw versionMissing(named(id), version, current);
  return { row: found, current };
}

/** A test case's fields as stored, checked: what creating and changing one write. */
export interface TestCaseFields {
  name: string;
  tags: string[];
  enabled: boolean;
  /** Storage form (checkSteps); empty for a spec case. */
  steps: JsonValue[];
  /** A spec case's storage form (checkSpec); null for a case of steps. */
  playwright: JsonValue | null;
  recordTrace: boolean;
  /** 0 to 3 (checkRetries). */
  retries: number;
}

/**
 * Checks a new test case's name, tags, and steps or Playwright spec (CreateTestCase, each test
 * case of ImportContent), adding every violation under `prefix` (`""`, `test_cases[3].`), and
 * returns their stored form.
 */
export function checkTestCase(
  input: {
    name: string;
    tags: readonly string[];
    steps: readonly Step[];
    retries: number;
    playwright?: PlaywrightSpec | undefined;
  },
  prefix: string,
  violations: Violations,
): Omit<TestCaseFields, "enabled" | "recordTrace"> {
  const { playwright } = input;
  if (playwright && input.steps.length > 0)
    violations.add(
      `${prefix}steps`,
      "must be empty for a Playwright spec case: a test case holds steps or a spec, not both",
    );
  return {
    name: checkName(input.name, `${prefix}name`, violations),
    tags: checkTags(input.tags, `${prefix}tags`, violations),
    steps: playwright ? [] : checkSteps(input.steps, `${prefix}steps`, violations),
    playwright: playwright ? checkSpec(playwright, `${prefix}playwright`, violations) : null,
    retries: checkRetries(input.retries, `${prefix}retries`, violations),
  };
}

/**
 * Creates a test case of checked fields, at version 1 (the column's default) with its snapshot, in
 * the caller's transaction: the one place that does (CreateTestCase, ImportContent).
 */
export async function insertTestCase(
  sql: Sql,
  projectId: string,
  fields: TestCaseFields,
  changer: Changer,
): Promise<TestCaseRow> {
  const id = newId("tc");
  const now = new Date();
  await sql.all(
    `insert into catalog.test_cases (id, project_id, name, tags, enabled, steps, playwright, record_trace, retries, created_at, updated_at)
     values (?, ?, ?, ?::text[], ?, ?::jsonb, ?::jsonb, ?, ?, ?, ?)`,
    [
      id,
      projectId,
      fields.name,
      textArray(fields.tags),
      fields.enabled,
      JSON.stringify(fields.steps),
      // SQL null (not the JSON null that JSON.stringify makes) for a case of steps.
      fields.playwright === null ? null : JSON.stringify(fields.playwright),
      fields.recordTrace,
      fields.retries,
      now,
      now,
    ],
  );
  await recordCaseVersions(sql, [id], changer);
  return findCase(sql, projectId, id);
}

/**
 * Changes the given fields (checked) of a test case, the rest as they are: the one place that
 * changes a test case (UpdateTestCase, ImportContent). One statement checks `expectedVersion`
 * (when given) and writes, so of two saves made on one version exactly one is stored: the other
 * waits for the first's row lock, then finds the version moved on. A change that changes nothing
 * stores nothing and keeps the version. Returns the test case as it now is, and whether this
 * stored a new version (when not, the caller tells a refused version from nothing to change).
 */
export async function changeTestCase(
  sql: Sql,
  projectId: string,
  id: string,
  changes: Partial<TestCaseFields>,
  changer: Changer,
  expectedVersion?: number,
): Promise<{ row: TestCaseRow; stored: boolean }> {
  // A spec given makes a spec case (no steps); steps given, a case of steps (no spec).
  const kind = changes.playwright ? "spec" : changes.steps ? "steps" : null;
  // name, tags, enabled, steps, kind and spec, record_trace, retries: each null when not set
  // (coalesce keeps the stored one).
  const values = [
    changes.name ?? null,
    changes.tags ? textArray(changes.tags) : null,
    changes.enabled ?? null,
    kind === "spec" ? "[]" : changes.steps ? JSON.stringify(changes.steps) : null,
    kind,
    kind === "spec" ? JSON.stringify(changes.playwright) : null,
    changes.recordTrace ?? null,
    changes.retries ?? null,
  ];
  const spec = "case ?::text when 'spec' then ?::jsonb when 'steps' then null else t.playwright end";
  const stored = await sql.all(
    `update catalog.test_cases t set name = coalesce(?, t.name), tags = coalesce(?::text[], t.tags),
       enabled = coalesce(?, t.enabled), steps = coalesce(?::jsonb, t.steps), playwright = ${spec},
       record_trace = coalesce(?, t.record_trace), retries = coalesce(?::int, t.retries), updated_at = ?,
       version = t.version + 1
     where t.project_id = ? and t.id = ? and (?::int is null or t.version = ?::int)
       and (t.name, t.tags, t.enabled, t.steps, t.playwright, t.record_trace, t.retries) is distinct from
         (coalesce(?, t.name), coalesce(?::text[], t.tags), coalesce(?::boolean, t.enabled), coalesce(?::jsonb, t.steps),
          ${spec}, coalesce(?::boolean, t.record_trace), coalesce(?::int, t.retries))
     returning t.id`,
    [...values, new Date(), projectId, id, expectedVersion ?? null, expectedVersion ?? null, ...values],
  );
  if (stored.length > 0) await recordCaseVersions(sql, [id], changer);
  return { row: await findCase(sql, projectId, id), stored: stored.length > 0 };
}

/** CreateTestCase, GetTestCase, ListTestCases, UpdateTestCase, DeleteTestCase. */
export function testCaseHandlers({ db }: Deps): Handlers {
  return {
    async createTestCase(req) {
      const violations = new Violations();
      const fields = checkTestCase(req, "", violations);
      const row = await db.write(async (sql) => {
        const grant = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
        violations.check();
        return insertTestCase(
          sql,
          grant.project.id,
          { ...fields, enabled: req.enabled ?? true, recordTrace: req.recordTrace },
          changerOf(grant, req.actor),
        );
      });
      return { testCase: testCaseToProto(row) };
    },

    async getTestCase(req) {
      checkReadVersion(req.version);
      const { row, current } = await db.read(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.READ);
        if (req.version !== undefined) return findCaseVersion(sql, project.id, req.testCaseId, req.version);
        const found = await findCase(sql, project.id, req.testCaseId);
        return { row: found, current: found.version };
      });
      return { testCase: testCaseToProto(row), currentVersion: current };
    },

    async listTestCases(req) {
      const tags = filterTags(req.tags);
      const search = req.search ?? "";
      const violations = new Violations();
      const usesVariable = req.usesVariable
        ? checkVariableName(req.usesVariable, "uses_variable", violations)
        : "";
      if (req.testCaseIds.length > listLimit)
        violations.add(
          "test_case_ids",
          `must hold at most ${listLimit} test cases, as a plan does (got ${req.testCaseIds.length})`,
        );
      const rows = await db.read(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.READ);
        violations.check();
        const where = ["t.project_id = ?"];
        const params: unknown[] = [project.id];
        if (req.testCaseIds.length > 0) {
          where.push("t.id = any(?::text[])");
          params.push(textArray(req.testCaseIds));
        }
        if (tags.length > 0) {
          where.push(anyTagCondition);
          params.push(textArray(tags));
        }
        if (search !== "") {
          // strpos, not LIKE: the text is matched as it is, % and _ included.
          where.push("strpos(lower(t.name), lower(?)) > 0");
          params.push(search);
        }
        if (usesVariable !== "") {
          // The stored JSON escapes neither braces nor name characters, so `{{NAME}}` appears in
          // its text exactly where a step names it (step.proto). A Playwright spec reads it as
          // `process.env.NAME` (the name checked above holds only letters, digits and _, so it is
          // safe in the pattern, which ends it where a longer name would go on).
          where.push(
            "(strpos(t.steps::text, ?) > 0 or coalesce(t.playwright::text, '') ~ ('process\\.env\\.' || ?::text || '($|[^A-Za-z0-9_])'))",
          );
          params.push(`{{${usesVariable}}}`, usesVariable);
        }
        // One more than the limit tells whether the list was cut.
        return sql.all<TestCaseRow>(
          `select ${testCaseColumns(req.includeSteps)} from catalog.test_cases t where ${where.join(" and ")}
           order by t.created_at, t.id limit ?`,
          [...params, listLimit + 1],
        );
      });
      return {
        testCases: rows.slice(0, listLimit).map(testCaseToProto),
        truncated: rows.length > listLimit,
      };
    },

    async updateTestCase(req) {
      const violations = new Violations();
      const name = req.name === undefined ? undefined : checkName(req.name, "name", violations);
      const tags = req.tags === undefined ? undefined : checkTags(req.tags.tags, "tags.tags", violations);
      const steps =
        req.steps === undefined ? undefined : checkSteps(req.steps.steps, "steps.steps", violations);
      if (req.steps !== undefined && req.playwright !== undefined)
        violations.add(
          "playwright",
          "set steps or playwright, not both: a test case holds steps or a Playwright spec",
        );
      const playwright =
        req.playwright === undefined ? undefined : checkSpec(req.playwright, "playwright", violations);
      const retries =
        req.retries === undefined ? undefined : checkRetries(req.retries, "retries", violations);
      const expected = req.expectedVersion;
      checkVersion(expected, "expected_version", violations);
      const row = await db.write(async (sql) => {
        const grant = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
        await findCase(sql, grant.project.id, req.testCaseId);
        violations.check();
        const { row: current, stored } = await changeTestCase(
          sql,
          grant.project.id,
          req.testCaseId,
          { name, tags, enabled: req.enabled, steps, playwright, recordTrace: req.recordTrace, retries },
          changerOf(grant, req.actor),
          expected,
        );
        // Nothing stored: the version was another (refused), or nothing would change.
        const conflict = !stored && conflictIf(named(current.id), expected, current);
        if (conflict) throw conflict;
        return current;
      });
      return { testCase: testCaseToProto(row) };
    },

    async deleteTestCase(req) {
      const violations = new Violations();
      checkVersion(req.expectedVersion, "expected_version", violations);
      violations.check();
      await db.write(async (sql) => {
        const grant = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
        // Locks, always in this order: the test case, then the plans holding it (as a plan's
        // writes do: its test cases for share, then the plan), so two writers never wait for each
        // other. Locked, the test case cannot be added to a plan until this commits.
        const locked = await sql.one<{ version: number }>(
          "select t.version from catalog.test_cases t where t.project_id = ? and t.id = ? for update",
          [grant.project.id, req.testCaseId],
        );
        if (!locked) throw missing(req.testCaseId);
        if (req.expectedVersion !== undefined && req.expectedVersion !== locked.version)
          throw editConflict(
            named(req.testCaseId),
            req.expectedVersion,
            await findCase(sql, grant.project.id, req.testCaseId),
          );
        await sql.all(
          `select tp.id from catalog.test_plans tp
           where tp.id in (select pc.plan_id from catalog.test_plan_cases pc where pc.test_case_id = ?)
           order by tp.id for update`,
          [req.testCaseId],
        );
        // Each plan losing the test case is changed: a new version, stored by whoever deleted it.
        const plans = await sql.all<{ plan_id: string }>(
          "delete from catalog.test_plan_cases where test_case_id = ? returning plan_id",
          [req.testCaseId],
        );
        const planIds = plans.map((plan) => plan.plan_id);
        if (planIds.length > 0) {
          await sql.all(
            "update catalog.test_plans set version = version + 1, updated_at = ? where id = any(?::text[])",
            [new Date(), textArray(planIds)],
          );
          await recordPlanVersions(sql, planIds, changerOf(grant, req.actor));
        }
        // Its kept versions go with it (on delete cascade).
        await sql.all("delete from catalog.test_cases where id = ? and version = ?", [
          req.testCaseId,
          locked.version,
        ]);
      });
      return {};
    },
  };
}
