// Test case files for `testrunctl case create`: one test case, or a list of them, in JSON or YAML.
//
//   name: log in works          # required
//   tags: [smoke, auth]         # optional
//   enabled: true               # optional, default true
//   steps: [...]                # the steps of docs/runs.md, see steps.ts
import type { Step } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { parse as parseYaml } from "yaml";
import { UsageError } from "./errors.js";
import { boolean, child, item, object, string, stringList } from "./input.js";
import { stepsFromFile } from "./steps.js";

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

/**
 * Parses a file's text (JSON when the name ends in .json, YAML otherwise; YAML also reads JSON)
 * and converts every test case, failing on the first problem with the field's path.
 */
export function parseTestCaseFile(text: string, fileName: string): TestCaseInput[] {
  const document = parseDocument(text, fileName);
  try {
    if (!Array.isArray(document)) return [testCaseFromFile(document, "")];
    if (document.length === 0) throw new UsageError("the list holds no test case");
    return document.map((entry, index) => testCaseFromFile(entry, item("", index)));
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`${fileName}: ${error.message}`);
    throw error;
  }
}

function parseDocument(text: string, fileName: string): unknown {
  try {
    if (/\.json$/i.test(fileName)) return JSON.parse(text);
    return parseYaml(text);
  } catch (error) {
    // Parser messages quote the position and a bit of the line: the file is the operator's own.
    throw new UsageError(
      `${fileName}: not valid ${/\.json$/i.test(fileName) ? "JSON" : "YAML"}: ${firstLine(error)}`,
    );
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
