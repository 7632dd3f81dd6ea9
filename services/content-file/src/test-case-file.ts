// Test case files (`testrunctl case create --file`, the console): one test case, or a list of them,
// in JSON or YAML.
//
//   name: log in works          # required
//   tags: [smoke, auth]         # optional
//   enabled: true               # optional, default true
//   steps: [...]                # the steps of docs/runs.md, see steps.ts
import type { Step } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { parse as parseYaml } from "yaml";
import { boolean, child, InputError, item, type JsonValue, object, string, stringList } from "./input.js";
import { stepsFromFile, stepToFile } from "./steps.js";

/** A test case read from a file, ready for CatalogService.CreateTestCase. */
export interface TestCaseInput {
  name: string;
  tags: string[];
  enabled?: boolean;
  steps: Step[];
  /** Where it sits in the file: "" for a file holding one test case, "[2]" for the third of a list. */
  path: string;
}

const testCaseFields = ["name", "tags", "enabled", "steps"] as const;

/** How a file's text is read: JSON, or YAML (which also reads JSON). */
export type FileFormat = "json" | "yaml";

/** JSON when the file's name ends in .json, YAML otherwise. */
export const formatOfFileName = (fileName: string): FileFormat =>
  /\.json$/i.test(fileName) ? "json" : "yaml";

/**
 * Parses a file's text and converts every test case, failing on the first problem with an
 * InputError naming the field's path ("" for the document as a whole).
 */
export function parseTestCaseFile(text: string, format: FileFormat): TestCaseInput[] {
  const document = parseDocument(text, format);
  if (!Array.isArray(document)) return [testCaseFromFile(document, "")];
  if (document.length === 0) throw InputError.ofDocument("the list holds no test case");
  return document.map((entry, index) => testCaseFromFile(entry, item("", index)));
}

/** The document a file's text holds, as plain values. */
export function parseDocument(text: string, format: FileFormat): unknown {
  try {
    if (format === "json") return JSON.parse(text);
    return parseYaml(text);
  } catch (error) {
    // Parser messages quote the position and a bit of the line: the file is the writer's own.
    throw InputError.ofDocument(`not valid ${format === "json" ? "JSON" : "YAML"}: ${firstLine(error)}`);
  }
}

const firstLine = (error: unknown) => (error instanceof Error ? error.message : String(error)).split("\n")[0];

/** One test case of the file; `path` is its place in the document. */
export function testCaseFromFile(value: unknown, path: string): TestCaseInput {
  const testCase = object(value, path, testCaseFields);
  return {
    name: string(testCase.name, child(path, "name")),
    tags: testCase.tags === undefined ? [] : stringList(testCase.tags, child(path, "tags")),
    enabled: testCase.enabled === undefined ? undefined : boolean(testCase.enabled, child(path, "enabled")),
    steps: stepsFromFile(testCase.steps, child(path, "steps")),
    path,
  };
}

/** A test case in the file format: what testCaseFromFile reads back as the same test case. */
export function testCaseToFile(testCase: {
  name: string;
  tags: readonly string[];
  enabled: boolean;
  steps: readonly Step[];
}): { [key: string]: JsonValue } {
  return {
    name: testCase.name,
    ...(testCase.tags.length > 0 && { tags: [...testCase.tags] }),
    // Written only when false: a reader takes an absent `enabled` as true.
    ...(!testCase.enabled && { enabled: false }),
    steps: testCase.steps.map(stepToFile),
  };
}
