// A project's content as one document (docs/runs.md, "Content documents"): its test cases and test
// plans, exported by `testrunctl content export` and the console, imported by `testrunctl content
// import` and the console (CatalogService.ImportContent), kept in a repository and reviewed as code.
//
//   testCases:
//     - id: tc_…                # optional: the test case it is; else it is matched by name
//       name: log in works
//       tags: [smoke]           # tags, enabled, recordTrace, steps as in test-case-file.ts
//       steps: [...]
//   testPlans:
//     - id: pln_…               # optional, as above
//       name: smoke
//       description: …          # optional
//       testCases: [log in works, tc_…]   # in run order: ids, or names of test cases
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ImportContentRequestSchema } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Step } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { stringify as stringifyYaml } from "yaml";
import {
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
import {
  type FileFormat,
  isContentDocument,
  parseDocument,
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
  /** Where it sits in the document: "testPlans[1]". */
  path: string;
}

/** What a content document holds, read. */
export interface ContentDocument {
  testCases: TestCaseInput[];
  testPlans: TestPlanInput[];
}

const documentFields = ["testCases", "testPlans"] as const;
const testPlanFields = ["id", "name", "description", "testCases"] as const;

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
    throw InputError.ofDocument("a content document holds testCases, testPlans or both");
  }
  object(document, "", documentFields);
  const { testPlans } = document;
  return {
    testCases: testCasesFromFile(document),
    testPlans:
      testPlans === undefined
        ? []
        : list(testPlans, "testPlans").map((entry, index) =>
            testPlanFromFile(entry, item("testPlans", index)),
          ),
  };
}

function testPlanFromFile(value: unknown, path: string): TestPlanInput {
  const plan = object(value, path, testPlanFields);
  const id = optionalString(plan.id, child(path, "id"));
  return {
    ...(id !== undefined && { id }),
    name: string(plan.name, child(path, "name")),
    description: optionalString(plan.description, child(path, "description")) ?? "",
    testCases: plan.testCases === undefined ? [] : stringList(plan.testCases, child(path, "testCases")),
    path,
  };
}

/**
 * A document's items as CatalogService.ImportContent takes them, in document order, so the
 * catalog's `test_cases[i]` / `test_plans[i]` are the document's `testCases[i]` / `testPlans[i]`.
 */
export function importItemsOf(
  document: ContentDocument,
): Pick<MessageInitShape<typeof ImportContentRequestSchema>, "testCases" | "testPlans"> {
  return {
    testCases: document.testCases.map(({ id, name, tags, enabled, recordTrace, steps }) => ({
      id,
      name,
      tags,
      enabled,
      recordTrace,
      steps,
    })),
    testPlans: document.testPlans.map(({ id, name, description, testCases }) => ({
      id,
      name,
      description,
      testCases,
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
  steps: readonly Step[];
}

/** A test plan as the catalog returns it. */
export interface StoredTestPlan {
  id: string;
  name: string;
  description: string;
  testCaseIds: readonly string[];
}

/**
 * A project's test cases and plans as a content document, every item with its id, in the order
 * given (the catalog's: oldest first, so a later export changes only what changed). A plan names
 * each of its test cases by name when no other test case of the document has that name (ignoring
 * letter case) and it is no test case's id, so the plan reads like what it runs; by id otherwise.
 */
export function contentDocumentToFile(content: {
  testCases: readonly StoredTestCase[];
  testPlans: readonly StoredTestPlan[];
}): { testCases: JsonValue[]; testPlans: JsonValue[] } {
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
  return {
    testCases: content.testCases.map((testCase) => ({ id: testCase.id, ...testCaseToFile(testCase) })),
    testPlans: content.testPlans.map((plan) => ({
      id: plan.id,
      name: plan.name,
      ...(plan.description !== "" && { description: plan.description }),
      testCases: plan.testCaseIds.map((id) => reference.get(id) ?? id),
    })),
  };
}

/** The content document's text, in YAML or JSON; readContentDocument reads it back as the same items. */
export function writeContentDocument(
  content: { testCases: readonly StoredTestCase[]; testPlans: readonly StoredTestPlan[] },
  format: FileFormat,
): string {
  const document = contentDocumentToFile(content);
  if (format === "json") return `${JSON.stringify(document, null, 2)}\n`;
  // No line folding: a long string stays on one line, so a change to it is a one-line diff.
  return stringifyYaml(document, { lineWidth: 0 });
}
