import { create, type JsonValue } from "@bufbuild/protobuf";
import {
  Permission,
  type ResolveRunSelectionRequest,
  type SelectedTestCase,
  SelectedTestCaseSchema,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { authorizeProjectListing } from "../access.js";
import { ambiguous, invalid, notFound } from "../errors.js";
import { type EnvironmentRow, environmentColumns, environmentToProto } from "../rows.js";
import { type Sql, textArray } from "../sql.js";
import { stepsFromStorage } from "../steps.js";
import type { Deps, Handlers } from "./context.js";
import { anyTagCondition, filterTags, listLimit } from "./test-cases.js";

// ResolveRunSelection: what a new run executes (catalog.proto documents every rule and their order).

interface SelectedRow {
  id: string;
  name: string;
  steps: JsonValue[];
}

interface Selection {
  testPlanId?: string;
  rows: SelectedRow[];
  defaultName: string;
}

const maxRunName = 200;

/** At most 200 characters; a longer name is cut and ends with "…". */
function runName(name: string): string {
  const characters = [...name];
  return characters.length <= maxRunName ? name : `${characters.slice(0, maxRunName - 1).join("")}…`;
}

/**
 * Step 2: exactly one selection, not empty. (The oneof carries at most one; the gateway refuses a
 * body naming several.)
 */
function checkSelectionGiven(selection: ResolveRunSelectionRequest["selection"]): void {
  switch (selection.case) {
    case undefined:
      throw invalid("one of test_plan, test_case_ids, tags is required");
    case "testPlan":
      if (selection.value === "") throw invalid("test_plan must not be empty");
      return;
    case "testCaseIds":
      if (selection.value.ids.length === 0) throw invalid("test_case_ids must not be empty");
      return;
    case "tags":
      if (filterTags(selection.value.tags).length === 0)
        throw invalid("tags must hold at least one non-empty tag");
      return;
  }
}

/**
 * The item of `rows` (ordered with an id match first) whose id is `value`, else the one whose name
 * equals it ignoring case. Several name matches (and no id match) are ambiguous.
 */
function pickByIdOrName<T extends { id: string }>(
  rows: readonly T[],
  value: string,
  field: string,
  what: string,
): T {
  const [first] = rows;
  if (!first) throw notFound(`no ${what} with the id or name "${value}" in this project`);
  if (first.id === value || rows.length === 1) return first;
  throw ambiguous(
    field,
    value,
    rows.map((row) => row.id),
  );
}

/** `pickByIdOrName` over the items of `table` that match, read in one query. */
async function byIdOrName<T extends { id: string }>(
  sql: Sql,
  query: { columns: string; table: string; alias: string; field: string; what: string },
  projectId: string,
  value: string,
): Promise<T> {
  const { columns, table, alias, field, what } = query;
  const rows = await sql.all<T>(
    `select ${columns} from ${table} ${alias}
     where ${alias}.project_id = ? and (${alias}.id = ? or lower(${alias}.name) = lower(?))
     order by (${alias}.id = ?) desc, ${alias}.created_at, ${alias}.id`,
    [projectId, value, value, value],
  );
  return pickByIdOrName(rows, value, field, what);
}

/**
 * Step 3's candidates, read with the access check (`authorizeProjectListing`): the environments
 * named `value` by id or name (an id match first), or without a name the default, else the oldest.
 */
function environmentCandidates(value: string | undefined) {
  return value
    ? {
        select: `select ${environmentColumns}, (e.id = ?) as exact from catalog.environments e
                 where e.project_id = p.id and (e.id = ? or lower(e.name) = lower(?))`,
        orderBy: "exact desc, created_at, id",
        params: [value, value, value],
      }
    : {
        select: `select ${environmentColumns} from catalog.environments e where e.project_id = p.id
                 order by e.is_default desc, e.created_at, e.id limit 1`,
        orderBy: "created_at, id",
      };
}

/** Step 3: the named environment, else the default, else the oldest. */
function resolveEnvironment(
  candidates: readonly EnvironmentRow[],
  value: string | undefined,
): EnvironmentRow {
  if (value) return pickByIdOrName(candidates, value, "environment", "environment");
  const [row] = candidates;
  if (!row) throw notFound("the project has no environment");
  return row;
}

async function selectPlan(sql: Sql, projectId: string, value: string): Promise<Selection> {
  const plan = await byIdOrName<{ id: string; name: string }>(
    sql,
    {
      columns: "tp.id, tp.name",
      table: "catalog.test_plans",
      alias: "tp",
      field: "test_plan",
      what: "test plan",
    },
    projectId,
    value,
  );
  const rows = await sql.all<SelectedRow>(
    `select t.id, t.name, t.steps from catalog.test_plan_cases pc join catalog.test_cases t on t.id = pc.test_case_id
     where pc.plan_id = ? and t.enabled order by pc.position`,
    [plan.id],
  );
  return { testPlanId: plan.id, rows, defaultName: plan.name };
}

async function selectIds(sql: Sql, projectId: string, given: readonly string[]): Promise<Selection> {
  const ids = [...new Set(given)];
  if (ids.length > listLimit)
    throw invalid(`test_case_ids names ${ids.length} distinct test cases; at most ${listLimit}`);
  const found = await sql.all<SelectedRow>(
    "select t.id, t.name, t.steps from catalog.test_cases t where t.project_id = ? and t.id = any(?::text[])",
    [projectId, textArray(ids)],
  );
  const byId = new Map(found.map((row) => [row.id, row]));
  const unknown = ids.find((id) => !byId.has(id));
  if (unknown !== undefined) throw notFound(`test case ${unknown || "(empty id)"} not found in this project`);
  return {
    rows: ids.map((id) => byId.get(id) as SelectedRow),
    defaultName: ids.length === 1 ? "1 test case" : `${ids.length} test cases`,
  };
}

async function selectTags(sql: Sql, projectId: string, given: readonly string[]): Promise<Selection> {
  const tags = filterTags(given);
  const rows = await sql.all<SelectedRow & { total: string }>(
    `select t.id, t.name, t.steps, count(*) over () as total from catalog.test_cases t
     where t.project_id = ? and t.enabled and ${anyTagCondition}
     order by t.created_at, t.id limit ?`,
    [projectId, textArray(tags), listLimit + 1],
  );
  const total = Number(rows[0]?.total ?? 0);
  // Never a silent cut: the caller narrows the tags or splits the run.
  if (total > listLimit) throw invalid(`the tags select ${total} test cases; at most ${listLimit}`);
  // Duplicates ignoring case named once, as first written.
  const distinct = tags.filter(
    (tag, index) => tags.findIndex((other) => other.toLowerCase() === tag.toLowerCase()) === index,
  );
  return { rows, defaultName: `tags: ${distinct.join(", ")}` };
}

/** ResolveRunSelection. */
export function resolveHandlers({ db }: Deps): Handlers {
  return {
    async resolveRunSelection(req) {
      return db.read(async (sql) => {
        const {
          grant: { project },
          rows: environments,
        } = await authorizeProjectListing<EnvironmentRow>(
          sql,
          req.actor,
          req.projectId,
          Permission.START_RUN,
          environmentCandidates(req.environment),
        );
        const selection = req.selection;
        checkSelectionGiven(selection);
        const environment = resolveEnvironment(environments, req.environment);
        let chosen: Selection;
        if (selection.case === "testPlan") chosen = await selectPlan(sql, project.id, selection.value);
        else if (selection.case === "testCaseIds")
          chosen = await selectIds(sql, project.id, selection.value.ids);
        else if (selection.case === "tags") chosen = await selectTags(sql, project.id, selection.value.tags);
        else throw invalid("one of test_plan, test_case_ids, tags is required");
        if (chosen.rows.length === 0)
          throw invalid("nothing to run: the selection holds no enabled test case");
        return {
          environment: environmentToProto(environment),
          testPlanId: chosen.testPlanId,
          testCases: chosen.rows.map(
            (row): SelectedTestCase =>
              create(SelectedTestCaseSchema, {
                testCaseId: row.id,
                name: row.name,
                steps: stepsFromStorage(row.steps),
              }),
          ),
          defaultRunName: runName(chosen.defaultName),
        };
      });
    },
  };
}
