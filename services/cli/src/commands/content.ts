// Test cases and test plans (CatalogService).

import { fileFieldPath } from "@testrun/content-file";
import type { TestCase, TestPlan } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Command } from "commander";
import { parseText } from "../arguments.js";
import { type CommandKit, collect, readInput } from "../command-kit.js";
import type { CliContext } from "../context.js";
import { CommandError, ServiceCallError } from "../errors.js";
import { jsonText } from "../output.js";
import type { TestCaseInput } from "../test-case-file.js";
import { readTestCaseFile } from "../test-case-file.js";
import { testCaseView, testPlanView } from "../views.js";
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

/** testrunctl's `case and plan` commands. */
export function registerContentCommands(
  program: Command,
  { io, ctx, leaf, print, printOne, projectOption }: CommandKit,
): void {
  // --- test cases ----------------------------------------------------------------------------
  const testCase = program.command("case").description("test cases of a project");
  leaf(testCase, "create", "create test cases from a JSON or YAML file holding one test case or a list")
    .addOption(projectOption().makeOptionMandatory())
    .requiredOption("-f, --file <path>", 'the file ("-" reads standard input as YAML or JSON)')
    .action(async (options: { json?: boolean; project: string; file: string }) => {
      const text = options.file === "-" ? await io.readStdin() : await readInput(options.file);
      const testCases = readTestCaseFile(text, options.file === "-" ? "stdin" : options.file);
      const created = await createTestCases(ctx(), { projectId: options.project, testCases });
      if (options.json) return io.stdout(jsonText(testCaseView.listJson(created)));
      io.stdout(testCaseView.table(created));
    });
  leaf(testCase, "list", "list a project's test cases, oldest first (at most 500)")
    .addOption(projectOption().makeOptionMandatory())
    .option("--tag <tag>", "only test cases having this tag (repeat for any of several)", collect)
    .option("--search <text>", "only test cases whose name contains this text, ignoring case")
    .option("--steps", "include each test case's steps (JSON output)")
    .action(
      async (options: {
        json?: boolean;
        project: string;
        tag?: string[];
        search?: string;
        steps?: boolean;
      }) => {
        const { testCases, truncated } = await listTestCases(ctx(), {
          projectId: options.project,
          tags: options.tag,
          search: options.search,
          includeSteps: options.steps ?? false,
        });
        if (options.json) {
          return io.stdout(jsonText({ ...testCaseView.listJson(testCases), truncated }));
        }
        print(options, testCaseView, testCases, undefined);
        if (truncated) io.stderr("more than 500 test cases matched: only the first 500 are listed\n");
      },
    );

  // --- test plans ----------------------------------------------------------------------------
  const plan = program.command("plan").description("test plans of a project (ordered lists of test cases)");
  leaf(plan, "create <name>", "create a test plan")
    .addOption(projectOption().makeOptionMandatory())
    .option("-c, --case <id-or-name>", "a test case, by id or exact name (repeat, in run order)", collect)
    .option("--description <text>", "free text, at most 2000 characters")
    .action(
      async (
        name: string,
        options: { json?: boolean; project: string; case?: string[]; description?: string },
      ) => {
        const created = await createTestPlan(ctx(), {
          projectId: options.project,
          name: parseText(name, "the name"),
          description: options.description,
          testCases: options.case ?? [],
        });
        printOne(options, testPlanView, created, "testPlan");
      },
    );
  leaf(plan, "list", "list a project's test plans, oldest first")
    .addOption(projectOption().makeOptionMandatory())
    .action(async (options: { json?: boolean; project: string }) => {
      const testPlans = await listTestPlans(ctx(), { projectId: options.project });
      print(options, testPlanView, testPlans, testPlanView.listJson(testPlans));
    });
}
