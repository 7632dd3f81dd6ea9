// Test cases and test plans (CatalogService).

import { create, toBinary } from "@bufbuild/protobuf";
import {
  type ContentDocument,
  type FileFormat,
  fileFieldPath,
  importItemsOf,
  type StoredContent,
  writeContentDocument,
} from "@testrun/content-file";
import {
  type Environment,
  ImportContentRequestSchema,
  type ImportContentResponse,
  type TestCase,
  type TestPlan,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { serviceReadMaxBytes } from "@testrun/kit";
import { type Command, Option } from "commander";
import { parseText, parseWholeNumber } from "../arguments.js";
import { type CommandKit, collect, parser, readInput } from "../command-kit.js";
import type { CliContext } from "../context.js";
import { CommandError, ServiceCallError, UsageError } from "../errors.js";
import { jsonText } from "../output.js";
import { readSpecFolder } from "../spec-folder.js";
import type { TestCaseInput } from "../test-case-file.js";
import { readCaseFile, readContentFile } from "../test-case-file.js";
import { importSummary, importView, testCaseView, testPlanView } from "../views.js";
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
        recordTrace: testCase.recordTrace,
        retries: testCase.retries,
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
  /** TestPlan.retries (0 to 3); unset: each test case's own. */
  retries?: number;
}

export async function createTestPlan(ctx: CliContext, input: CreateTestPlanInput): Promise<TestPlan> {
  const testCaseIds = await resolveTestCases(ctx, input.projectId, input.testCases);
  const { testPlan } = await ctx.catalog.createTestPlan({
    actor: ctx.actor,
    projectId: input.projectId,
    name: input.name,
    description: input.description ?? "",
    testCaseIds,
    retries: input.retries,
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

/** The most test cases a content document holds (CatalogService.ImportContent's bound). */
const maxDocumentTestCases = 500;

/**
 * The project's test cases, with their steps, its test plans, environments and variables' names
 * (never values): what a content document holds. A project of more than 500 test cases is more
 * than one document holds: a CommandError.
 */
export async function readContent(
  ctx: CliContext,
  input: { projectId: string },
): Promise<
  StoredContent & {
    projectId: string;
    testCases: TestCase[];
    testPlans: TestPlan[];
    environments: Environment[];
    variableNames: string[];
  }
> {
  const { testCases, truncated } = await listTestCases(ctx, { ...input, includeSteps: true });
  if (truncated)
    throw new CommandError(
      `the project has more than ${maxDocumentTestCases} test cases, more than a content document holds (docs/runs.md, "Content documents")`,
    );
  const request = { actor: ctx.actor, projectId: input.projectId };
  const [testPlans, { environments }, { variables }] = await Promise.all([
    listTestPlans(ctx, input),
    ctx.catalog.listEnvironments(request),
    ctx.catalog.listVariables(request),
  ]);
  return {
    projectId: input.projectId,
    testCases,
    testPlans,
    environments,
    variableNames: variables.map((variable) => variable.name),
  };
}

/** The project's content as a document's text (docs/runs.md, "Content documents"). */
export async function exportContent(
  ctx: CliContext,
  input: { projectId: string; format: FileFormat },
): Promise<string> {
  return writeContentDocument(await readContent(ctx, input), input.format);
}

/**
 * Imports a content document (CatalogService.ImportContent): with `dryRun`, only what it would do.
 * A refusal names every bad field by its path in the document; nothing was written then.
 */
export async function importContent(
  ctx: CliContext,
  input: { projectId: string; document: ContentDocument; dryRun?: boolean },
): Promise<ImportContentResponse> {
  const request = create(ImportContentRequestSchema, {
    actor: ctx.actor,
    projectId: input.projectId,
    ...importItemsOf(input.document),
    dryRun: input.dryRun ?? false,
  });
  const bytes = toBinary(ImportContentRequestSchema, request).length;
  if (bytes > serviceReadMaxBytes)
    throw new UsageError(
      `the document is too large to import at once: its items come to ${mib(bytes)} MiB, and the catalog takes at most ${mib(serviceReadMaxBytes)} MiB in one call; split it into several documents`,
    );
  try {
    return await ctx.catalog.importContent(request);
  } catch (error) {
    if (!(error instanceof ServiceCallError)) throw error;
    throw new ServiceCallError(
      error.service,
      error.url,
      error.method,
      error.error,
      fileFieldPath,
      "nothing was imported",
    );
  }
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

/** testrunctl's `case`, `plan` and `content` commands. */
export function registerContentCommands(
  program: Command,
  { io, ctx, leaf, print, printOne, projectOption }: CommandKit,
): void {
  // --- test cases ----------------------------------------------------------------------------
  const testCase = program.command("case").description("test cases of a project");
  leaf(
    testCase,
    "create",
    "create test cases from a JSON or YAML file holding one test case, a list, or a content document",
  )
    .addOption(projectOption().makeOptionMandatory())
    .requiredOption("-f, --file <path>", 'the file ("-" reads standard input as YAML or JSON)')
    .action(async (options: { json?: boolean; project: string; file: string }) => {
      const text = options.file === "-" ? await io.readStdin() : await readInput(options.file);
      const fileName = options.file === "-" ? "stdin" : options.file;
      const { testCases, testPlans, environments, variables } = readCaseFile(text, fileName);
      const created = await createTestCases(ctx(), { projectId: options.project, testCases });
      if (options.json) io.stdout(jsonText(testCaseView.listJson(created)));
      else if (created.length > 0) io.stdout(testCaseView.table(created));
      const withIds = testCases.filter((c) => c.id !== undefined).length;
      if (created.length === 0) io.stderr(`${fileName} holds no test case: nothing was created\n`);
      if (withIds > 0)
        io.stderr(
          `note: ${withIds} of the file's test cases name an id: create makes new test cases and cannot keep ids; \`testrunctl content import\` updates the test cases the ids name instead\n`,
        );
      if (testPlans.length > 0)
        io.stderr(
          `note: the file's ${testPlans.length === 1 ? "test plan was" : `${testPlans.length} test plans were`} not created: test plans are imported with \`testrunctl content import\`\n`,
        );
      if (environments.length + variables.length > 0)
        io.stderr(
          "note: the file's environments and variables were not created: they are imported with `testrunctl content import`\n",
        );
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
    .option(
      "--retries <n>",
      "run a failed test again up to n times (0 to 3) in a run of the plan, in place of each test case's own",
      parser((v) => parseWholeNumber(v, "--retries", 0, 3)),
    )
    .action(
      async (
        name: string,
        options: { json?: boolean; project: string; case?: string[]; description?: string; retries?: number },
      ) => {
        const created = await createTestPlan(ctx(), {
          projectId: options.project,
          name: parseText(name, "the name"),
          description: options.description,
          testCases: options.case ?? [],
          retries: options.retries,
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

  // --- content documents ---------------------------------------------------------------------
  const content = program
    .command("content")
    .description(
      "a project's test cases and plans, environments and variable names as one YAML or JSON document (docs/runs.md)",
    );
  content
    .command("export")
    .description(
      "print the project's test cases and plans (with their ids), environments and variable names (never values) as a content document",
    )
    .addOption(projectOption().makeOptionMandatory())
    .addOption(
      new Option("--format <format>", "the document's format").choices(["yaml", "json"]).default("yaml"),
    )
    .action(async (options: { project: string; format: FileFormat }) => {
      io.stdout(await exportContent(ctx(), { projectId: options.project, format: options.format }));
    });
  leaf(
    content,
    "import",
    "make the project's test cases, plans and environments like a content document's, and create its variables without values: matched by id, else by name (by name alone for a document of another project); created, changed or left alone; all or nothing",
  )
    .addOption(projectOption().makeOptionMandatory())
    .option("-f, --file <path>", 'the document ("-" reads standard input as YAML or JSON)')
    .option(
      "--specs <folder>",
      "instead of a document: a folder of Playwright specs, one test case per spec file (with the helper files it imports), matched by the spec's path",
    )
    .option("--dry-run", "say what the import would do, and write nothing")
    .action(
      async (options: {
        json?: boolean;
        project: string;
        file?: string;
        specs?: string;
        dryRun?: boolean;
      }) => {
        if ((options.file === undefined) === (options.specs === undefined))
          throw new UsageError("give either --file <document> or --specs <folder>");
        const document =
          options.specs !== undefined
            ? await readSpecFolder(options.specs)
            : readContentFile(
                options.file === "-" ? await io.readStdin() : await readInput(options.file ?? ""),
                options.file === "-" ? "stdin" : (options.file ?? ""),
              );
        const result = await importContent(ctx(), {
          projectId: options.project,
          document,
          dryRun: options.dryRun ?? false,
        });
        if (options.json) return io.stdout(jsonText(importView.json(result)));
        const items = [...result.environments, ...result.variables, ...result.testCases, ...result.testPlans];
        if (items.length > 0) io.stdout(importView.table(items));
        io.stderr(`${importSummary(result)}\n`);
      },
    );
}
