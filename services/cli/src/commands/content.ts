// Test cases and test plans (CatalogService).
import type { TestCase, TestPlan } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { CliContext } from "../context.js";
import { CommandError, ServiceCallError } from "../errors.js";
import { fileFieldPath } from "../steps.js";
import type { TestCaseInput } from "../test-case-file.js";
import { required } from "./organizations.js";

/**
 * Creates the test cases in file order. The file was checked whole before the first call; if the
 * catalog refuses one, the error names its fields in the file's terms and says which test cases
 * were already created (each call is its own transaction, so those stay).
 */
export async function createTestCases(
  ctx: CliContext,
  input: { projectId: string; testCases: readonly TestCaseInput[] },
): Promise<TestCase[]> {
  const created: TestCase[] = [];
  for (const testCase of input.testCases) {
    try {
      const response = await ctx.catalog.createTestCase({
        actor: ctx.actor,
        projectId: input.projectId,
        name: testCase.name,
        tags: testCase.tags,
        enabled: testCase.enabled,
        steps: testCase.steps,
      });
      created.push(required(response.testCase, "test_case"));
    } catch (error) {
      if (!(error instanceof ServiceCallError)) throw error;
      const prefix = testCase.path ? `${testCase.path}.` : "";
      const note = created.length
        ? `created before it: ${created.map((done) => done.id).join(", ")}`
        : "nothing was created";
      throw new ServiceCallError(
        error.service,
        error.url,
        error.method,
        error.error,
        (field) => prefix + fileFieldPath(field),
        testCase.path ? `test case ${testCase.path} ("${testCase.name}"); ${note}` : note,
      );
    }
  }
  return created;
}

export interface ListTestCasesInput {
  projectId: string;
  tags?: string[];
  search?: string;
  includeSteps?: boolean;
}

/** The first 500 matching test cases, oldest first, and whether more matched. */
export async function listTestCases(
  ctx: CliContext,
  input: ListTestCasesInput,
): Promise<{ testCases: TestCase[]; truncated: boolean }> {
  const { testCases, truncated } = await ctx.catalog.listTestCases({
    actor: ctx.actor,
    projectId: input.projectId,
    tags: input.tags ?? [],
    search: input.search,
    includeSteps: input.includeSteps ?? false,
  });
  return { testCases, truncated };
}

export interface CreateTestPlanInput {
  projectId: string;
  name: string;
  description?: string;
  /** Test cases in run order, each an id or a name (the id-or-name rule of docs/rest-api.md). */
  testCases: readonly string[];
}

export async function createTestPlan(ctx: CliContext, input: CreateTestPlanInput): Promise<TestPlan> {
  const testCaseIds = await resolveTestCases(ctx, input.projectId, input.testCases);
  const { testPlan } = await ctx.catalog.createTestPlan({
    actor: ctx.actor,
    projectId: input.projectId,
    name: input.name,
    description: input.description ?? "",
    testCaseIds,
  });
  return required(testPlan, "test_plan");
}

export async function listTestPlans(ctx: CliContext, input: { projectId: string }): Promise<TestPlan[]> {
  const { testPlans } = await ctx.catalog.listTestPlans({ actor: ctx.actor, projectId: input.projectId });
  return testPlans;
}

/**
 * Test case ids for references that are ids or names: a value equal to the id of a test case of
 * the project is that id; otherwise it is a name, matched exactly ignoring letter case. No match,
 * or more than one, is a CommandError naming the reference (and the candidate ids).
 */
export async function resolveTestCases(
  ctx: CliContext,
  projectId: string,
  references: readonly string[],
): Promise<string[]> {
  if (references.length === 0) return [];
  const { testCases, truncated } = await listTestCases(ctx, { projectId });
  const ids = [];
  for (const reference of references) {
    if (testCases.some((testCase) => testCase.id === reference)) {
      ids.push(reference);
      continue;
    }
    // Past 500 test cases the list is cut: an id past the cut goes to the catalog as is (it names
    // the id if it is not of this project), and a name is looked up on its own.
    if (truncated && reference.startsWith("tc_")) {
      ids.push(reference);
      continue;
    }
    const candidates = truncated
      ? (await listTestCases(ctx, { projectId, search: reference })).testCases
      : testCases;
    const matches = candidates.filter((testCase) => testCase.name.toLowerCase() === reference.toLowerCase());
    if (matches.length === 0) {
      throw new CommandError(`no test case of the project has the id or name "${reference}"`);
    }
    if (matches.length > 1) {
      throw new CommandError(
        `${matches.length} test cases are named "${reference}": give one of these ids instead: ${matches.map((match) => match.id).join(", ")}`,
      );
    }
    ids.push((matches[0] as TestCase).id);
  }
  return ids;
}
