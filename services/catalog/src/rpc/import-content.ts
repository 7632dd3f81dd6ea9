import { isDeepStrictEqual } from "node:util";
import { create, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type ImportContentRequest,
  type ImportContentResponse,
  ImportContentResponseSchema,
  type ImportedItemSchema,
  ItemOutcome,
  Permission,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { FieldViolationsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import { authorizeProject } from "../access.js";
import { Violations } from "../errors.js";
import { type TestCaseRow, type TestPlanRow, testCaseColumns, testPlanColumns } from "../rows.js";
import { type Sql, textArray } from "../sql.js";
import { codePoints, maxNameLength } from "../validate.js";
import { type Changer, changerOf } from "../versions.js";
import type { Deps, Handlers } from "./context.js";
import { decide, hasProblem, type Item, item, type Keyed, lowerKeys } from "./import-items.js";
import {
  applySettings,
  checkEnvironments,
  checkVariables,
  type EnvironmentItem,
  matchEnvironments,
  matchVariables,
  maxDocumentEnvironments,
  maxDocumentVariables,
  type VariableItem,
} from "./import-settings.js";
import { changeTestCase, checkTestCase, insertTestCase, type TestCaseFields } from "./test-cases.js";
import {
  changeTestPlan,
  checkCaseIds,
  checkTestPlan,
  insertTestPlan,
  maxCases,
  type TestPlanFields,
} from "./test-plans.js";

// ImportContent: a content document's test cases and plans made the project's (catalog.proto and
// docs/runs.md, "Content documents"), with its environments and variable names (import-settings.ts).
// Three passes: every item's fields are checked with the rules of CreateTestCase / CreateTestPlan;
// every item is matched to one of the project's (by id, else by name, a Playwright spec case by its
// spec's path; ids are not used in a file of another project) and every plan's test cases resolved; only then, when nothing was wrong, is
// anything written.

/** The most test cases and test plans one document holds. */
export const maxDocumentTestCases = 500;
export const maxDocumentTestPlans = 100;

/** A test case; `sourceId`: its id in a file of another project, which that file's plans may name. */
type CaseItem = Item<TestCaseFields> & { sourceId?: string };
type PlanItem = Item<Omit<TestPlanFields, "testCaseIds">> & {
  references: readonly string[];
  /** Each reference resolved: a test case's id, or the path of a test case of the document to create. */
  resolved: string[];
};

/** ImportContent. */
export function importContentHandlers({ db }: Deps): Handlers {
  return {
    async importContent(req) {
      const violations = new Violations();
      const tooMany = checkCounts(req, violations);
      // A file of another project names that project's items: its ids are not looked up here.
      const foreign = Boolean(req.sourceProjectId) && req.sourceProjectId !== req.projectId;
      const ownId = (id: string | undefined) => (foreign ? undefined : id);
      const environments: EnvironmentItem[] = tooMany ? [] : checkEnvironments(req, violations);
      const variables: VariableItem[] = tooMany ? [] : checkVariables(req, violations);
      const cases: CaseItem[] = tooMany
        ? []
        : req.testCases.map((given, index) => {
            const field = `test_cases[${index}]`;
            const checked = checkTestCase(given, `${field}.`, violations);
            return {
              ...item(field, `testCases[${index}]`, ownId(given.id), {
                ...checked,
                enabled: given.enabled ?? true,
                recordTrace: given.recordTrace,
              }),
              ...(foreign && given.id && { sourceId: given.id }),
            };
          });
      const plans: PlanItem[] = tooMany
        ? []
        : req.testPlans.map((given, index) => {
            const field = `test_plans[${index}]`;
            return {
              ...item(
                field,
                `testPlans[${index}]`,
                ownId(given.id),
                checkTestPlan(given, `${field}.`, violations),
              ),
              references: checkReferenceCount(given.testCases, `${field}.test_cases`, violations),
              resolved: [],
            };
          });
      const settings = { environments, variables, variablesWithoutValue: [] as string[], foreign };
      const run = async (sql: Sql) => {
        const grant = await authorizeProject(sql, req.actor, req.projectId, Permission.EDIT);
        const { project } = grant;
        if (tooMany) violations.check();
        // Imports of one project take turns, so two cannot both create the same new test case.
        if (!req.dryRun)
          await sql.all("select id from catalog.projects where id = ? for no key update", [project.id]);
        await matchEnvironments(sql, project.id, environments, violations, !req.dryRun);
        settings.variablesWithoutValue = await matchVariables(
          sql,
          project.id,
          variables,
          violations,
          !req.dryRun,
        );
        const others = await match(sql, project.id, cases, plans, violations, !req.dryRun, foreign);
        const response = responseOf(cases, plans, others, settings, false);
        if (!violations.empty)
          throw refusal(violations, response, [...environments, ...variables, ...cases, ...plans], req);
        if (req.dryRun) return response;
        await applySettings(sql, project.id, environments, variables);
        await apply(sql, project.id, cases, plans, changerOf(grant, req.actor));
        return responseOf(cases, plans, others, settings, true);
      };
      return req.dryRun ? db.read(run) : db.write(run);
    },
  };
}

/** Past a document's bounds nothing else is checked: the request is refused for its size alone. */
function checkCounts(req: ImportContentRequest, violations: Violations): boolean {
  const count = (length: number, max: number, field: string, what: string) => {
    if (length > max)
      violations.add(
        field,
        `must hold at most ${max} ${what} (got ${length}): split the document into several`,
      );
  };
  count(req.environments.length, maxDocumentEnvironments, "environments", "environments");
  count(req.variables.length, maxDocumentVariables, "variables", "variables");
  count(req.testCases.length, maxDocumentTestCases, "test_cases", "test cases");
  count(req.testPlans.length, maxDocumentTestPlans, "test_plans", "test plans");
  return !violations.empty;
}

/**
 * A plan's references, or none past the bound of a plan: those are not resolved one by one (a
 * document of 8 MiB holds millions of short references).
 */
function checkReferenceCount(
  references: readonly string[],
  field: string,
  violations: Violations,
): readonly string[] {
  if (references.length <= maxCases) return references;
  violations.add(field, `must hold at most ${maxCases} test cases (got ${references.length})`);
  return [];
}

/**
 * Matches every item to the project's (setting `match`, `outcome`, `changed`), resolves the plans'
 * test cases, and adds what is wrong. Reads only the project's items the document may name (by id
 * or name), locked when the import is to be written. Returns how many of the project's test cases
 * and plans the document does not hold.
 */
async function match(
  sql: Sql,
  projectId: string,
  cases: CaseItem[],
  plans: PlanItem[],
  violations: Violations,
  lock: boolean,
  foreign: boolean,
): Promise<{ testCases: number; testPlans: number }> {
  const references = plans.flatMap((plan) => plan.references);
  // One query for every name: the cases', the plans', then the plans' references.
  const keys = await lowerKeys(sql, [
    ...cases.map((c) => c.fields.name),
    ...plans.map((p) => p.fields.name),
    ...references,
  ]);
  const caseKeys = keys.slice(0, cases.length);
  const planKeys = keys.slice(cases.length, cases.length + plans.length);
  const referenceKeys = keys.slice(cases.length + plans.length);
  const forUpdate = lock ? " for update" : "";
  const specPaths = cases.map(specPathOf);
  const caseRows = await sql.all<Keyed<TestCaseRow> & { spec_path: string | null }>(
    `select ${testCaseColumns(true)}, lower(t.name) as name_key, ${specPath} as spec_path from catalog.test_cases t
     where t.project_id = ? and (t.id = any(?::text[]) or lower(t.name) = any(?::text[])
       or (t.playwright is not null and ${specPath} = any(?::text[])))
     order by t.created_at, t.id${forUpdate}`,
    [
      projectId,
      textArray([...cases.flatMap((c) => (c.id ? [c.id] : [])), ...references]),
      textArray([...caseKeys, ...referenceKeys]),
      textArray(specPaths.filter((path) => path !== undefined)),
    ],
  );
  const planRows = await sql.all<Keyed<TestPlanRow>>(
    `select ${testPlanColumns}, lower(tp.name) as name_key from catalog.test_plans tp
     where tp.project_id = ? and (tp.id = any(?::text[]) or lower(tp.name) = any(?::text[]))
     order by tp.created_at, tp.id${forUpdate}`,
    [projectId, textArray(plans.flatMap((p) => (p.id ? [p.id] : []))), textArray(planKeys)],
  );
  matchItems(cases, caseKeys, caseRows, "test case", violations, foreign, {
    paths: specPaths,
    pathOf: (row) => row.spec_path,
  });
  matchItems(plans, planKeys, planRows, "test plan", violations, foreign);

  const rowOf = new Map(caseRows.map((row) => [row.id, row]));
  for (const testCase of cases) {
    const row = testCase.match ? rowOf.get(testCase.match) : undefined;
    decide(testCase, violations, row && changedCaseFields(testCase.fields, row));
  }
  resolveReferences(plans, referenceKeys, cases, caseKeys, caseRows, violations);
  const planRowOf = new Map(planRows.map((row) => [row.id, row]));
  for (const plan of plans) {
    const row = plan.match ? planRowOf.get(plan.match) : undefined;
    decide(plan, violations, row && changedPlanFields(plan, row));
  }

  const counts = await sql.one<{ test_cases: number; test_plans: number }>(
    `select (select count(*) from catalog.test_cases where project_id = ?)::int as test_cases,
            (select count(*) from catalog.test_plans where project_id = ?)::int as test_plans`,
    [projectId, projectId],
  );
  const matched = (items: Item<unknown>[]) => new Set(items.flatMap((i) => (i.match ? [i.match] : []))).size;
  return {
    testCases: (counts?.test_cases ?? 0) - matched(cases),
    testPlans: (counts?.test_plans ?? 0) - matched(plans),
  };
}

/** The stored spec's path, as SQL over a test case aliased `t` (test_cases_spec_path_index). */
const specPath = "((t.playwright -> 'spec') ->> 'path')";

/** A spec case's key in an import: its spec's path; undefined for a case of steps or a bad spec. */
function specPathOf(testCase: CaseItem): string | undefined {
  const spec = testCase.fields.playwright as { spec?: { path?: unknown } } | null;
  const path = spec?.spec?.path;
  return typeof path === "string" && path !== "" ? path : undefined;
}

/**
 * Sets each item's match: the project's item of its id, else, for a spec case (`specs.paths` has
 * its path), the one of its spec's path, else the one of its name. Adds a violation for an id that
 * is not the project's, a name (or spec path) several of the project's items have, a name (or spec
 * path) another item of the document has (an item without an id is known by it alone), and a
 * second item matching the same one.
 */
function matchItems<Fields extends { name: string }, Row extends Keyed<{ id: string }>>(
  items: Item<Fields>[],
  keys: readonly string[],
  rows: readonly Row[],
  what: string,
  violations: Violations,
  foreign: boolean,
  specs?: { paths: readonly (string | undefined)[]; pathOf: (row: Row) => string | null },
): void {
  const byId = new Map(rows.map((row) => [row.id, row]));
  const matchedBy = new Map<string, Item<Fields>>();
  items.forEach((entry, index) => {
    const key = keys[index] ?? "";
    const path = specs?.paths[index];
    let found: string | undefined;
    if (entry.id !== undefined) {
      if (entry.id === "")
        violations.add(`${entry.field}.id`, `must not be empty: leave it out to match the ${what} by name`);
      else if (!byId.has(entry.id))
        violations.add(`${entry.field}.id`, `${entry.id} is not a ${what} of this project`);
      else found = entry.id;
    } else if (specs && path !== undefined) {
      // A spec case is the project's case of its spec's path: renaming it in the document keeps it.
      const field = `${entry.field}.playwright.spec.path`;
      const twin = specs.paths.findIndex((other, at) => at !== index && other === path);
      const same = rows.filter((row) => specs.pathOf(row) === path);
      if (twin >= 0)
        violations.add(
          field,
          `${items[twin]?.path} has the same spec path: the document holds each spec file once`,
        );
      else if (same.length > 1)
        violations.add(
          field,
          `${same.length} ${what}s of the project have this spec path: give this one the id of the one it is (${same.map((row) => row.id).join(", ")})`,
        );
      else found = same[0]?.id;
    } else if (!hasProblem(violations, `${entry.field}.name`)) {
      // A spec case of the same name is not a twin: it is known by its spec's path.
      const twin = items.findIndex(
        (_, at) => at !== index && keys[at] === key && specs?.paths[at] === undefined,
      );
      const named = rows.filter((row) => row.name_key === key);
      if (twin >= 0)
        violations.add(
          `${entry.field}.name`,
          foreign
            ? `${items[twin]?.path} has the same name: the file comes from another project, so its ${what}s are matched by name and each needs a name of its own`
            : `${items[twin]?.path} has the same name: give this ${what} its id, or another name`,
        );
      else if (named.length > 1)
        violations.add(
          `${entry.field}.name`,
          `${named.length} ${what}s of the project have this name: give this one the id of the one it is (${named.map((row) => row.id).join(", ")})`,
        );
      else found = named[0]?.id;
    }
    if (found === undefined) return;
    const earlier = matchedBy.get(found);
    if (earlier)
      violations.add(
        `${entry.field}.${entry.id !== undefined ? "id" : path !== undefined && specs ? "playwright.spec.path" : "name"}`,
        `is the same ${what} (${found}) as ${earlier.path}: the document holds each ${what} once`,
      );
    else {
      matchedBy.set(found, entry);
      entry.match = found;
    }
  });
}

/** The fields of a test case, in the document's terms, that differ from its row. */
function changedCaseFields(fields: TestCaseFields, row: TestCaseRow): string[] {
  return [
    fields.name !== row.name && "name",
    !isDeepStrictEqual(fields.tags, row.tags) && "tags",
    fields.enabled !== row.enabled && "enabled",
    // jsonb keeps no key order; the comparison of values ignores it too.
    !isDeepStrictEqual(fields.steps, row.steps as JsonValue[]) && "steps",
    !isDeepStrictEqual(fields.playwright, row.playwright ?? null) && "playwright",
    fields.recordTrace !== row.record_trace && "recordTrace",
    fields.retries !== row.retries && "retries",
  ].filter((field) => field !== false);
}

function changedPlanFields(plan: PlanItem, row: TestPlanRow): string[] {
  return [
    plan.fields.name !== row.name && "name",
    plan.fields.description !== row.description && "description",
    !isDeepStrictEqual(plan.resolved, row.test_case_ids) && "testCases",
    plan.fields.retries !== row.retries && "retries",
  ].filter((field) => field !== false);
}

/**
 * Resolves each plan's test cases against the project's test cases as the import leaves them: a
 * test case's id, else the name of exactly one of them (the document's by their new names, the
 * others by theirs). A test case still to be created stands as its document path until it is.
 */
function resolveReferences(
  plans: PlanItem[],
  referenceKeys: readonly string[],
  cases: readonly CaseItem[],
  caseKeys: readonly string[],
  caseRows: readonly Keyed<TestCaseRow>[],
  violations: Violations,
): void {
  const inDocument = new Set(cases.flatMap((c) => (c.match ? [c.match] : [])));
  // The document's test cases by what they will be: their match, or new (their path); unknown for
  // one whose id or name has a problem (a reference to it adds nothing to that problem).
  const documentCases = cases.map((c, index) => ({
    id:
      c.match ??
      (hasProblem(violations, `${c.field}.id`) || hasProblem(violations, `${c.field}.name`)
        ? undefined
        : c.path),
    key: caseKeys[index] ?? "",
  }));
  const after = [
    ...caseRows.filter((row) => !inDocument.has(row.id)).map((row) => ({ id: row.id, key: row.name_key })),
    ...documentCases,
  ];
  const ids = new Set(caseRows.map((row) => row.id));
  // In a file of another project a plan may name a test case by that project's id (as an export
  // does for test cases sharing a name): it is the document's test case of that id.
  const bySourceId = new Map(
    cases.flatMap((c, index) => (c.sourceId ? [[c.sourceId, documentCases[index]?.id]] : [])),
  );
  let next = 0;
  for (const plan of plans) {
    const listField = `${plan.field}.test_cases`;
    plan.resolved = plan.references.map((reference, index) => {
      const key = referenceKeys[next++] ?? "";
      const at = `${listField}[${index}]`;
      // Stands for a reference not resolved: distinct, so the repeat check passes over it.
      const unresolved = `(${at})`;
      if (reference === "") {
        violations.add(at, "must not be empty: a test case's id or name");
        return unresolved;
      }
      // Longer than any name or id: refused without quoting it back.
      if (codePoints(reference) > maxNameLength) {
        violations.add(at, `must be at most ${maxNameLength} characters: a test case's id or name`);
        return unresolved;
      }
      if (ids.has(reference)) return reference;
      if (bySourceId.has(reference)) return bySourceId.get(reference) ?? unresolved;
      const found = after.filter((testCase) => testCase.key === key);
      const [only] = found;
      if (found.length === 1 && only?.id) return only.id;
      if (found.some((testCase) => testCase.id === undefined)) return unresolved;
      violations.add(
        at,
        found.length === 0
          ? `"${reference}" is neither the id nor the name of a test case of the project (as this import leaves it)`
          : `${found.length} test cases are named "${reference}": give the id of the one meant (${found.map((testCase) => testCase.id).join(", ")})`,
      );
      return unresolved;
    });
    checkCaseIds(plan.resolved, listField, violations);
  }
}

/** Writes what was decided, test cases first (plans name the new ones). */
async function apply(
  sql: Sql,
  projectId: string,
  cases: CaseItem[],
  plans: PlanItem[],
  changer: Changer,
): Promise<void> {
  const created = new Map<string, string>();
  for (const testCase of cases) {
    if (testCase.outcome === ItemOutcome.CREATED) {
      const row = await insertTestCase(sql, projectId, testCase.fields, changer);
      testCase.match = row.id;
      created.set(testCase.path, row.id);
    } else if (testCase.outcome === ItemOutcome.CHANGED && testCase.match) {
      await changeTestCase(
        sql,
        projectId,
        testCase.match,
        changesOf(testCase.fields, testCase.changed),
        changer,
      );
    }
  }
  for (const plan of plans) {
    const testCaseIds = plan.resolved.map((id) => created.get(id) ?? id);
    if (plan.outcome === ItemOutcome.CREATED) {
      plan.match = await insertTestPlan(sql, projectId, { ...plan.fields, testCaseIds }, changer);
    } else if (plan.outcome === ItemOutcome.CHANGED && plan.match) {
      await changeTestPlan(
        sql,
        projectId,
        plan.match,
        changesOf({ ...plan.fields, testCaseIds }, plan.changed),
        changer,
      );
    }
  }
}

/** The fields named in `changed` (the document's terms: `testCases` is testCaseIds). */
function changesOf<T extends object>(fields: T, changed: readonly string[]): Partial<T> {
  return Object.fromEntries(
    Object.entries(fields).filter(([name]) => changed.includes(name === "testCaseIds" ? "testCases" : name)),
  ) as Partial<T>;
}

function responseOf(
  cases: readonly CaseItem[],
  plans: readonly PlanItem[],
  others: { testCases: number; testPlans: number },
  settings: {
    environments: readonly EnvironmentItem[];
    variables: readonly VariableItem[];
    variablesWithoutValue: readonly string[];
    foreign: boolean;
  },
  applied: boolean,
): ImportContentResponse {
  const entry = (i: Item<{ name: string }>): MessageInitShape<typeof ImportedItemSchema> => ({
    path: i.path,
    name: i.fields.name,
    id: i.match ?? "",
    outcome: i.outcome,
    changedFields: i.changed,
  });
  return create(ImportContentResponseSchema, {
    testCases: cases.map(entry),
    testPlans: plans.map(entry),
    applied,
    otherTestCases: others.testCases,
    otherTestPlans: others.testPlans,
    environments: settings.environments.map(entry),
    variables: settings.variables.map(entry),
    variablesWithoutValue: [...settings.variablesWithoutValue],
    fromOtherProject: settings.foreign,
  });
}

/** A name as the refusal's message quotes it: an item's name may be the problem (too long). */
const clip = (name: string) =>
  codePoints(name) > maxNameLength ? `${[...name].slice(0, maxNameLength).join("")}…` : name;

/** A violation's item: `test_cases[3]` of `test_cases[3].steps[0]`. */
const itemField = /^(environments|variables|test_cases|test_plans)\[(\d+)\]/;

/**
 * INVALID_ARGUMENT with every violation, items in document order, and what the import would do
 * with the items that have none. The message names the first bad item and its first problem.
 */
function refusal(
  violations: Violations,
  response: ImportContentResponse,
  items: readonly Item<{ name: string }>[],
  req: ImportContentRequest,
): ConnectError {
  // Items in the order a document lists them: environments, variables, test cases, test plans.
  const sections = {
    environments: 0,
    variables: req.environments.length,
    test_cases: req.environments.length + req.variables.length,
    test_plans: req.environments.length + req.variables.length + req.testCases.length,
  };
  const order = (field: string) => {
    const found = itemField.exec(field);
    if (!found) return -1;
    return sections[found[1] as keyof typeof sections] + Number(found[2]);
  };
  const list = [...violations.list].sort((a, b) => order(a.field) - order(b.field));
  const [first] = list;
  const owner = items.find((i) => first?.field.startsWith(`${i.field}.`));
  const problem = owner
    ? `${owner.field} "${clip(owner.fields.name)}": ${first?.field.slice(owner.field.length + 1)}: ${first?.description}`
    : `${first?.field}: ${first?.description}`;
  const bad = new Set(list.map((v) => itemField.exec(v.field)?.[0] ?? v.field)).size;
  const where = violations.truncated ? "" : ` in ${bad === 1 ? "1 item" : `${bad} items`}`;
  const more =
    violations.count > 1
      ? ` (${violations.count} problems${where}; ${violations.truncated ? `the first ${list.length} are` : "each is"} in the FieldViolations detail)`
      : "";
  return new ConnectError(`${problem}${more}`, Code.InvalidArgument, undefined, [
    { desc: FieldViolationsSchema, value: { violations: list } },
    { desc: ImportContentResponseSchema, value: response },
  ]);
}
