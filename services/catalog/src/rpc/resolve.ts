import { create, type JsonValue } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import {
  Permission,
  type ResolveRunSelectionRequest,
  type SelectedTestCase,
  SelectedTestCaseSchema,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { authorizeProjectListings, type Listing } from "../access.js";
import { ambiguous, invalid, notFound } from "../errors.js";
import { playwrightFromStorage } from "../playwright.js";
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
  /** A spec case's stored spec; null for a case of steps. */
  playwright: JsonValue | null;
  version: number;
  record_trace: boolean;
  /** SelectedTestCase.retries: the plan's when a plan sets them, else the test case's. */
  retries: number;
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

/** The rows of `table` (as `alias`) in the project whose id is `value` or whose name equals it ignoring case. */
const byIdOrName = (columns: string, table: string, alias: string, value: string): Listing => ({
  select: `select ${columns}, (${alias}.id = ?) as exact from ${table} ${alias}
           where ${alias}.project_id = p.id and (${alias}.id = ? or lower(${alias}.name) = lower(?))`,
  orderBy: "exact desc, created_at, id",
  params: [value, value, value],
});

/** Step 3's candidates: the environments named `value`, or without a name the default, else the oldest. */
const environmentCandidates = (value: string | undefined): Listing =>
  value
    ? byIdOrName(environmentColumns, "catalog.environments", "e", value)
    : {
        select: `select ${environmentColumns} from catalog.environments e where e.project_id = p.id
                 order by e.is_default desc, e.created_at, e.id limit 1`,
        orderBy: "created_at, id",
      };

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

/**
 * Step 4, one kind of selection: what to read with the access check (nothing when the selection
 * is refused without reading), then the selection from those rows (a plan's cases are read then).
 */
interface SelectionReader {
  listing?: Listing;
  choose(rows: SelectedRow[], sql: Sql): Promise<Selection>;
}

function planReader(value: string): SelectionReader {
  return {
    listing: byIdOrName("tp.id, tp.name, tp.created_at", "catalog.test_plans", "tp", value),
    async choose(candidates, sql) {
      const plan = pickByIdOrName(candidates, value, "test_plan", "test plan");
      const rows = await sql.all<SelectedRow>(
        `select t.id, t.name, t.steps, t.playwright, t.version, t.record_trace, coalesce(tp.retries, t.retries) as retries
         from catalog.test_plan_cases pc join catalog.test_cases t on t.id = pc.test_case_id
           join catalog.test_plans tp on tp.id = pc.plan_id
         where pc.plan_id = ? and t.enabled order by pc.position`,
        [plan.id],
      );
      return { testPlanId: plan.id, rows, defaultName: plan.name };
    },
  };
}

function idsReader(given: readonly string[]): SelectionReader {
  const ids = [...new Set(given)];
  const tooMany = ids.length > listLimit;
  return {
    ...(!tooMany && {
      listing: {
        select:
          "select t.id, t.name, t.steps, t.playwright, t.version, t.record_trace, t.retries from catalog.test_cases t where t.project_id = p.id and t.id = any(?::text[])",
        orderBy: "id",
        params: [textArray(ids)],
      },
    }),
    async choose(found) {
      if (tooMany)
        throw invalid(`test_case_ids names ${ids.length} distinct test cases; at most ${listLimit}`);
      const byId = new Map(found.map((row) => [row.id, row]));
      const unknown = ids.find((id) => !byId.has(id));
      if (unknown !== undefined)
        throw notFound(`test case ${unknown || "(empty id)"} not found in this project`);
      return {
        rows: ids.map((id) => byId.get(id) as SelectedRow),
        defaultName: ids.length === 1 ? "1 test case" : `${ids.length} test cases`,
      };
    },
  };
}

function tagsReader(given: readonly string[]): SelectionReader {
  const tags = filterTags(given);
  return {
    listing: {
      select: `select t.id, t.name, t.steps, t.playwright, t.version, t.record_trace, t.retries, t.created_at, count(*) over () as total from catalog.test_cases t
               where t.project_id = p.id and t.enabled and ${anyTagCondition}
               order by t.created_at, t.id limit ?`,
      orderBy: "created_at, id",
      params: [textArray(tags), listLimit + 1],
    },
    async choose(rows) {
      const total = Number((rows[0] as { total?: number } | undefined)?.total ?? 0);
      // Never a silent cut: the caller narrows the tags or splits the run.
      if (total > listLimit) throw invalid(`the tags select ${total} test cases; at most ${listLimit}`);
      // Duplicates ignoring case named once, as first written.
      const distinct = tags.filter(
        (tag, index) => tags.findIndex((other) => other.toLowerCase() === tag.toLowerCase()) === index,
      );
      return { rows, defaultName: `tags: ${distinct.join(", ")}` };
    },
  };
}

/**
 * Step 2: exactly one selection, not empty (the oneof carries at most one; the gateway refuses a
 * body naming several). Answers its reader, or the refusal, which is thrown after the access check.
 */
function selectionReader(selection: ResolveRunSelectionRequest["selection"]): SelectionReader | ConnectError {
  switch (selection.case) {
    case "testPlan":
      return selection.value === "" ? invalid("test_plan must not be empty") : planReader(selection.value);
    case "testCaseIds":
      return selection.value.ids.length === 0
        ? invalid("test_case_ids must not be empty")
        : idsReader(selection.value.ids);
    case "tags":
      return filterTags(selection.value.tags).length === 0
        ? invalid("tags must hold at least one non-empty tag")
        : tagsReader(selection.value.tags);
    default:
      return invalid("one of test_plan, test_case_ids, tags is required");
  }
}

/** The sources of a run's Playwright specs together, at most (docs/runs.md, "Playwright spec cases"). */
export const maxRunSpecBytes = 16 * 1024 * 1024;

const specSourceBytes = (testCase: SelectedTestCase) =>
  testCase.playwright
    ? [testCase.playwright.spec, ...testCase.playwright.files].reduce(
        (sum, file) => sum + Buffer.byteLength(file?.source ?? ""),
        0,
      )
    : 0;

/** ResolveRunSelection. */
export function resolveHandlers({ db }: Deps): Handlers {
  return {
    async resolveRunSelection(req) {
      return db.read(async (sql) => {
        // One statement reads the access, step 3's candidates and step 4's rows (a plan's cases
        // follow in a second); every rule is then applied in its order.
        const reader = selectionReader(req.selection);
        const { rows } = await authorizeProjectListings<{
          environments: EnvironmentRow;
          selected?: SelectedRow;
        }>(sql, req.actor, req.projectId, Permission.START_RUN, {
          environments: environmentCandidates(req.environment),
          selected: reader instanceof ConnectError ? undefined : reader.listing,
        });
        if (reader instanceof ConnectError) throw reader;
        const environment = resolveEnvironment(rows.environments, req.environment);
        const chosen = await reader.choose(rows.selected ?? [], sql);
        if (chosen.rows.length === 0)
          throw invalid("nothing to run: the selection holds no enabled test case");
        const testCases = chosen.rows.map(
          (row): SelectedTestCase =>
            create(SelectedTestCaseSchema, {
              testCaseId: row.id,
              name: row.name,
              steps: stepsFromStorage(row.steps),
              ...(row.playwright && { playwright: playwrightFromStorage(row.playwright) }),
              version: row.version,
              recordTrace: row.record_trace,
              retries: row.retries,
            }),
        );
        const specBytes = testCases.reduce((sum, testCase) => sum + specSourceBytes(testCase), 0);
        // Each test of a run keeps its spec until the run is pruned: never a silent cut either.
        if (specBytes > maxRunSpecBytes)
          throw invalid(
            `the selection's Playwright specs hold ${specBytes} bytes of sources; a run takes at most ${maxRunSpecBytes} (16 MiB): split the run`,
          );
        return {
          environment: environmentToProto(environment),
          testPlanId: chosen.testPlanId,
          testCases,
          defaultRunName: runName(chosen.defaultName),
          // Names only, never values: a run keeps them to say which were added or removed since another.
          variableNames: (
            await sql.all<{ name: string }>(
              "select name from catalog.variables where project_id = ? order by name limit 1000",
              [req.projectId],
            )
          ).map((row) => row.name),
        };
      });
    },
  };
}
