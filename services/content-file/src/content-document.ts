// A project's content as one document (docs/runs.md, "Content documents"): its test cases and test
// plans, environments and variable names, exported by `testrunctl content export` and the console,
// imported by `testrunctl content import` and the console (CatalogService.ImportContent), kept in a
// repository and reviewed as code.
//
//   project: prj_…              # optional: the project it was exported from; in another project
//                               # the ids below are not that project's, so items match by name
//   environments:               # matched by name
//     - name: staging
//       baseUrl: https://staging.example.com
//       isDefault: true         # optional, default false
//   variables: [API_TOKEN]      # names only: a document never carries a value
//   testCases:
//     - id: tc_…                # optional: the test case it is; else it is matched by name
//       name: log in works
//       tags: [smoke]           # tags, enabled, recordTrace, retries, steps as in test-case-file.ts
//       steps: [...]           # or, for a Playwright spec case, playwright: {spec, files}
//                              # (matched by its spec's path when it has no id)
//   testPlans:
//     - id: pln_…               # optional, as above
//       name: smoke
//       description: …          # optional
//       testCases: [log in works, tc_…]   # in run order: ids, or names of test cases
//       retries: 1              # optional: 0 to 3, replacing each test case's in a run of the plan
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ImportContentRequestSchema } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Step } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { stringify as stringifyYaml } from "yaml";
import {
  boolean,
  child,
  InputError,
  item,
  type JsonValue,
  list,
  object,
  optionalString,
  string,
  stringList,
} from "./input.js";
import type { PlaywrightInput } from "./playwright.js";
import {
  type FileFormat,
  isContentDocument,
  parseDocument,
  retriesFromFile,
  type TestCaseInput,
  testCasesFromFile,
  testCaseToFile,
} from "./test-case-file.js";

/** A test plan of a content document. */
export interface TestPlanInput {
  /** The test plan it is, when the document names one; else it is matched by name. */
  id?: string;
  name: string;
  description: string;
  /** Its test cases in run order: each a test case's id, or its name. */
  testCases: string[];
  /** TestPlan.retries (0 to 3); absent: the plan sets none, each test case's own apply. */
  retries?: number;
  /** Where it sits in the document: "testPlans[1]". */
  path: string;
}

/** An environment of a content document, matched to the project's by name. */
export interface EnvironmentInput {
  name: string;
  baseUrl: string;
  /** Absent in the document: false. */
  isDefault: boolean;
  /** Where it sits in the document: "environments[0]". */
  path: string;
}

/** What a content document holds, read. */
export interface ContentDocument {
  /** The project it was exported from, when it says. */
  project?: string;
  environments: EnvironmentInput[];
  /** Variable names. */
  variables: string[];
  testCases: TestCaseInput[];
  testPlans: TestPlanInput[];
}

const documentFields = ["project", "environments", "variables", "testCases", "testPlans"] as const;
const testPlanFields = ["id", "name", "description", "testCases", "retries"] as const;
const environmentFields = ["name", "baseUrl", "isDefault"] as const;

/**
 * Parses a content document's text, failing on the first problem with an InputError naming the
 * field's path ("" for the document as a whole). A file of test cases alone (one, or a list) is
 * refused with how to make it a document.
 */
export function readContentDocument(text: string, format: FileFormat): ContentDocument {
  return contentDocumentFromFile(parseDocument(text, format));
}

/** A parsed content document's items (see readContentDocument). */
export function contentDocumentFromFile(document: unknown): ContentDocument {
  if (Array.isArray(document))
    throw InputError.ofDocument(
      "the document is a list: a content document is an object whose testCases holds the test cases (and testPlans the plans)",
    );
  if (!isContentDocument(document)) {
    const fields = typeof document === "object" && document !== null ? Object.keys(document) : [];
    if (fields.includes("steps") || fields.includes("name"))
      throw InputError.ofDocument(
        "the document is one test case: a content document is an object whose testCases holds the test cases (and testPlans the plans)",
      );
    object(document, "", documentFields);
    throw InputError.ofDocument("a content document holds testCases, testPlans, environments or variables");
  }
  object(document, "", documentFields);
  const { testPlans, environments, variables } = document;
  const project = optionalString(document.project, "project");
  return {
    ...(project !== undefined && { project }),
    environments:
      environments === undefined
        ? []
        : list(environments, "environments").map((entry, index) =>
            environmentFromFile(entry, item("environments", index)),
          ),
    variables: variables === undefined ? [] : variableNames(variables),
    testCases: testCasesFromFile(document),
    testPlans:
      testPlans === undefined
        ? []
        : list(testPlans, "testPlans").map((entry, index) =>
            testPlanFromFile(entry, item("testPlans", index)),
          ),
  };
}

function environmentFromFile(value: unknown, path: string): EnvironmentInput {
  const environment = object(value, path, environmentFields);
  return {
    name: string(environment.name, child(path, "name")),
    baseUrl: string(environment.baseUrl, child(path, "baseUrl")),
    isDefault:
      environment.isDefault === undefined ? false : boolean(environment.isDefault, child(path, "isDefault")),
    path,
  };
}

/** A list of names; an object in it (`- name: X`, `- X: secret`) is refused: values never go in a file. */
function variableNames(value: unknown): string[] {
  return list(value, "variables").map((entry, index) => {
    const path = item("variables", index);
    if (typeof entry === "object" && entry !== null && !Array.isArray(entry))
      throw new InputError(
        path,
        "must be a variable's name: a document lists variables by name only, never with a value",
      );
    return string(entry, path);
  });
}

function testPlanFromFile(value: unknown, path: string): TestPlanInput {
  const plan = object(value, path, testPlanFields);
  const id = optionalString(plan.id, child(path, "id"));
  return {
    ...(id !== undefined && { id }),
    name: string(plan.name, child(path, "name")),
    description: optionalString(plan.description, child(path, "description")) ?? "",
    testCases: plan.testCases === undefined ? [] : stringList(plan.testCases, child(path, "testCases")),
    ...(plan.retries !== undefined && { retries: retriesFromFile(plan.retries, child(path, "retries")) }),
    path,
  };
}

/**
 * A document's items as CatalogService.ImportContent takes them, in document order, so the
 * catalog's `test_cases[i]` / `test_plans[i]` are the document's `testCases[i]` / `testPlans[i]`
 * (and so on), with the project it came from.
 */
export function importItemsOf(
  document: ContentDocument,
): Pick<
  MessageInitShape<typeof ImportContentRequestSchema>,
  "testCases" | "testPlans" | "environments" | "variables" | "sourceProjectId"
> {
  return {
    ...(document.project !== undefined && { sourceProjectId: document.project }),
    environments: document.environments.map(({ name, baseUrl, isDefault }) => ({ name, baseUrl, isDefault })),
    variables: [...document.variables],
    testCases: document.testCases.map(
      ({ id, name, tags, enabled, recordTrace, retries, steps, playwright }) => ({
        id,
        name,
        tags,
        enabled,
        recordTrace,
        retries,
        steps,
        ...(playwright && { playwright: { spec: playwright.spec, files: [...playwright.files] } }),
      }),
    ),
    testPlans: document.testPlans.map(({ id, name, description, testCases, retries }) => ({
      id,
      name,
      description,
      testCases,
      retries,
    })),
  };
}

/** A test case as the catalog returns it, with its steps. */
export interface StoredTestCase {
  id: string;
  name: string;
  tags: readonly string[];
  enabled: boolean;
  /** TestCase.record_trace; absent: false. */
  recordTrace?: boolean;
  /** TestCase.retries; absent: 0. */
  retries?: number;
  steps: readonly Step[];
  /** TestCase.playwright: a Playwright spec case's files (its steps are then empty). */
  playwright?: PlaywrightInput | undefined;
}

/** A test plan as the catalog returns it. */
export interface StoredTestPlan {
  id: string;
  name: string;
  description: string;
  testCaseIds: readonly string[];
  /** TestPlan.retries; absent: the plan sets none. */
  retries?: number;
}

/** An environment as the catalog returns it. */
export interface StoredEnvironment {
  name: string;
  baseUrl: string;
  isDefault: boolean;
}

/**
 * What an export holds: the project's test cases and plans; and, when given, the project's id, its
 * environments and its variables' names (never a value: there is no field for one).
 */
export interface StoredContent {
  projectId?: string;
  environments?: readonly StoredEnvironment[];
  variableNames?: readonly string[];
  testCases: readonly StoredTestCase[];
  testPlans: readonly StoredTestPlan[];
}

/**
 * A project's content as a content document, every test case and plan with its id, in the order
 * given (the catalog's: oldest first, so a later export changes only what changed). A plan names
 * each of its test cases by name when no other test case of the document has that name (ignoring
 * letter case) and it is no test case's id, so the plan reads like what it runs; by id otherwise.
 * The project, environments and variables come first, when given (and not empty).
 */
export function contentDocumentToFile(content: StoredContent): { [key: string]: JsonValue } {
  const ids = new Set(content.testCases.map((testCase) => testCase.id));
  const named = new Map<string, number>();
  for (const { name } of content.testCases) {
    const key = name.toLowerCase();
    named.set(key, (named.get(key) ?? 0) + 1);
  }
  const reference = new Map(
    content.testCases.map(({ id, name }) => [
      id,
      named.get(name.toLowerCase()) === 1 && !ids.has(name) ? name : id,
    ]),
  );
  const environments = content.environments ?? [];
  const variables = content.variableNames ?? [];
  return {
    ...(content.projectId !== undefined && { project: content.projectId }),
    ...(environments.length > 0 && {
      environments: environments.map(({ name, baseUrl, isDefault }) => ({
        name,
        baseUrl,
        // Written only when true: a reader takes an absent `isDefault` as false.
        ...(isDefault && { isDefault: true }),
      })),
    }),
    ...(variables.length > 0 && { variables: [...variables] }),
    testCases: content.testCases.map((testCase) => ({ id: testCase.id, ...testCaseToFile(testCase) })),
    testPlans: content.testPlans.map((plan) => ({
      id: plan.id,
      name: plan.name,
      ...(plan.description !== "" && { description: plan.description }),
      testCases: plan.testCaseIds.map((id) => reference.get(id) ?? id),
      // Written when the plan sets them, 0 included (0 replaces each test case's own).
      ...(plan.retries !== undefined && { retries: plan.retries }),
    })),
  };
}

/** The content document's text, in YAML or JSON; readContentDocument reads it back as the same items. */
export function writeContentDocument(content: StoredContent, format: FileFormat): string {
  const document = contentDocumentToFile(content);
  if (format === "json") return `${JSON.stringify(document, null, 2)}\n`;
  // No line folding: a long string stays on one line, so a change to it is a one-line diff.
  return stringifyYaml(document, { lineWidth: 0 });
}
