import type { JsonValue } from "@bufbuild/protobuf";
import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Step } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { newId } from "@testrun/kit";
import { authorizeProject } from "../access.js";
import { notFound, Violations } from "../errors.js";
import { type TestCaseRow, testCaseColumns, testCaseToProto } from "../rows.js";
import { type Sql, textArray } from "../sql.js";
import { checkSteps } from "../steps.js";
import { checkName, checkTags, checkVariableName } from "../validate.js";
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

/** A test case's fields as stored, checked: what creating and changing one write. */
export interface TestCaseFields {
  name: string;
  tags: string[];
  enabled: boolean;
  /** Storage form (checkSteps). */
  steps: JsonValue[];
}

/**
 * Checks a new test case's name, tags and steps (CreateTestCase, each test case of ImportContent),
 * adding every violation under `prefix` (`""`, `test_cases[3].`), and returns their stored form.
 */
export function checkTestCase(
  input: { name: string; tags: readonly string[]; steps: readonly Step[] },
  prefix: string,
  violations: Violations,
): Omit<TestCaseFields, "enabled"> {
  return {
    name: checkName(input.name, `${prefix}name`, violations),
    tags: checkTags(input.tags, `${prefix}tags`, violations),
    steps: checkSteps(input.steps, `${prefix}steps`, violations),
  };
}

/** Creates a test case of checked fields: the one statement that does (CreateTestCase, ImportContent). */
export async function insertTestCase(
  sql: Sql,
  projectId: string,
  fields: TestCaseFields,
): Promise<TestCaseRow> {
  const now = new Date();
  const row = await sql.one<TestCaseRow>(
    `insert into catalog.test_cases as t (id, project_id, name, tags, enabled, steps, created_at, updated_at)
     values (?, ?, ?, ?::text[], ?, ?::jsonb, ?, ?) returning ${testCaseColumns(true)}`,
    [
      newId("tc"),
      projectId,
      fields.name,
      textArray(fields.tags),
      fields.enabled,
      JSON.stringify(fields.steps),
      now,
      now,
    ],
  );
  return row as TestCaseRow;
}

/**
 * Changes the given fields (checked) of a test case, the rest as they are: the one statement that
 * changes a test case (UpdateTestCase, ImportContent). Callers leave out what did not change and
 * do not call it for nothing.
 */
export async function changeTestCase(
  sql: Sql,
  id: string,
  changes: Partial<TestCaseFields>,
): Promise<TestCaseRow> {
  const row = await sql.one<TestCaseRow>(
    `update catalog.test_cases t set name = coalesce(?, t.name), tags = coalesce(?::text[], t.tags),
       enabled = coalesce(?, t.enabled), steps = coalesce(?::jsonb, t.steps), updated_at = ?
     where t.id = ? returning ${testCaseColumns(true)}`,
    [
      changes.name ?? null,
      changes.tags ? textArray(changes.tags) : null,
      changes.enabled ?? null,
      changes.steps ? JSON.stringify(changes.steps) : null,
      new Date(),
      id,
    ],
  );
  return row as TestCaseRow;
}

/** CreateTestCase, GetTestCase, ListTestCases, UpdateTestCase, DeleteTestCase. */
export function testCaseHandlers({ db }: Deps): Handlers {
  return {
    async createTestCase(req) {
      const violations = new Violations();
      const fields = checkTestCase(req, "", violations);
      const row = await db.write(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
        violations.check();
        return insertTestCase(sql, project.id, { ...fields, enabled: req.enabled ?? true });
      });
      return { testCase: testCaseToProto(row) };
    },

    async getTestCase(req) {
      const row = await db.read(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.READ);
        return findCase(sql, project.id, req.testCaseId);
      });
      return { testCase: testCaseToProto(row) };
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
          // its text exactly where a step names it (step.proto).
          where.push("strpos(t.steps::text, ?) > 0");
          params.push(`{{${usesVariable}}}`);
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
      const row = await db.write(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
        const current = await findCase(sql, project.id, req.testCaseId);
        violations.check();
        if (name === undefined && tags === undefined && req.enabled === undefined && steps === undefined)
          return current;
        return changeTestCase(sql, current.id, { name, tags, enabled: req.enabled, steps });
      });
      return { testCase: testCaseToProto(row) };
    },

    async deleteTestCase(req) {
      await db.write(async (sql) => {
        const { project } = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
        // Its entries in test plans go with it (on delete cascade).
        const deleted = await sql.all(
          "delete from catalog.test_cases where project_id = ? and id = ? returning id",
          [project.id, req.testCaseId],
        );
        if (deleted.length === 0) throw missing(req.testCaseId);
      });
      return {};
    },
  };
}
