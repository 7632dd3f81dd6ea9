// Test case files (`testrunctl case create --file`, the console): one test case, a list of them, or
// a project's content document (content-document.ts), in JSON or YAML.
//
//   name: log in works          # required
//   tags: [smoke, auth]         # optional
//   enabled: true               # optional, default true
//   recordTrace: true           # optional, default false: a trace of every run, not only failed ones
//   retries: 2                  # optional, default 0: a failed attempt is run again up to this many times (0 to 3)
//   steps: [...]                # the steps of docs/runs.md, see steps.ts
//   playwright:                 # instead of steps: a Playwright spec case (playwright.ts)
//     spec: {path: tests/login.spec.ts, source: "import { test } ..."}
//     files: [{path: pages/login.ts, source: "..."}]   # optional helper files
import type { Step } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { parse as parseYaml } from "yaml";
import {
  boolean,
  child,
  InputError,
  int32,
  item,
  type JsonValue,
  list,
  object,
  optionalString,
  string,
  stringList,
} from "./input.js";
import type { PlaywrightFileInput, PlaywrightInput } from "./playwright.js";
import { stepsFromFile, stepToFile } from "./steps.js";

/** A test case read from a file, ready for CatalogService.CreateTestCase. */
export interface TestCaseInput {
  /** The test case it is, when a content document names one by id (never in the other forms). */
  id?: string;
  name: string;
  tags: string[];
  enabled?: boolean;
  /** TestCase.record_trace; false when the file leaves it out. */
  recordTrace: boolean;
  /** TestCase.retries, 0 to 3; 0 when the file leaves it out. */
  retries: number;
  /** Empty for a Playwright spec case. */
  steps: Step[];
  /** A Playwright spec case's files (instead of steps). */
  playwright?: PlaywrightInput;
  /**
   * Where it sits in the file: "" for a file holding one test case, "[2]" for the third of a list,
   * "testCases[2]" in a content document.
   */
  path: string;
}

const testCaseFields = ["name", "tags", "enabled", "recordTrace", "retries", "steps", "playwright"] as const;

/** The most retries of a failed attempt a test case, plan or run may ask for (catalog.proto). */
export const maxRetries = 3;

/** A retry count (`retries` of a test case or plan): a whole number, 0 to 3. */
export function retriesFromFile(value: unknown, path: string): number {
  const retries = int32(value, path);
  if (retries < 0 || retries > maxRetries)
    throw new InputError(
      path,
      `must be 0 to ${maxRetries}, how many times a failed attempt is run again, not ${retries}`,
    );
  return retries;
}
/** A content document's test cases may also name the test case they are. */
const documentTestCaseFields = ["id", ...testCaseFields] as const;

/** How a file's text is read: JSON, or YAML (which also reads JSON). */
export type FileFormat = "json" | "yaml";

/** JSON when the file's name ends in .json, YAML otherwise. */
export const formatOfFileName = (fileName: string): FileFormat =>
  /\.json$/i.test(fileName) ? "json" : "yaml";

/**
 * Whether a parsed document is a project's content document: an object with testCases, testPlans,
 * environments or variables.
 */
export const isContentDocument = (document: unknown): document is Record<string, unknown> =>
  typeof document === "object" &&
  document !== null &&
  !Array.isArray(document) &&
  ("testCases" in document ||
    "testPlans" in document ||
    "environments" in document ||
    "variables" in document);

/**
 * Parses a file's text and converts every test case, failing on the first problem with an
 * InputError naming the field's path ("" for the document as a whole). A content document's test
 * cases are read with their ids; its test plans are left out (contentDocumentFromFile reads them).
 */
export function parseTestCaseFile(text: string, format: FileFormat): TestCaseInput[] {
  return testCasesFromFile(parseDocument(text, format));
}

/** The test cases of a parsed file in any of its three forms. */
export function testCasesFromFile(document: unknown): TestCaseInput[] {
  if (isContentDocument(document)) {
    const { testCases } = document;
    if (testCases === undefined) return [];
    return list(testCases, "testCases").map((entry, index) =>
      testCaseFromFile(entry, item("testCases", index), { withId: true }),
    );
  }
  if (!Array.isArray(document)) return [testCaseFromFile(document, "")];
  if (document.length === 0) throw InputError.ofDocument("the list holds no test case");
  return document.map((entry, index) => testCaseFromFile(entry, item("", index)));
}

/** The document a file's text holds, as plain values. */
export function parseDocument(text: string, format: FileFormat): unknown {
  let document: unknown;
  try {
    document = format === "json" ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    // Parser messages quote the position and a bit of the line: the file is the writer's own.
    throw InputError.ofDocument(`not valid ${format === "json" ? "JSON" : "YAML"}: ${firstLine(error)}`);
  }
  // Without aliases a document holds less text than it is long: the bound applies to what they add.
  if (format === "yaml") checkAliases(document, Math.max(maxExpandedCharacters, 2 * text.length));
  return document;
}

/**
 * The most text (characters of keys and strings, plus one per value) a YAML document may expand
 * to through its aliases: 32 MiB, what the console reads of a file (or twice the file's length, which
 * a document without aliases never comes near). A content document holds at
 * most 8 MiB of items (docs/runs.md), so no document that could be imported comes near it.
 */
export const maxExpandedCharacters = 32 * 1024 * 1024;

/**
 * Refuses what YAML aliases can make of a small file: a value that holds itself (`&a [*a]`: reading
 * it would recurse without end) and one small value repeated until the document is gigabytes (the
 * yaml library bounds how many nodes aliases add, not how much text they repeat). Walks the
 * document as its readers will, stopping as soon as it is too large.
 */
function checkAliases(document: unknown, limit: number): void {
  let budget = limit;
  const holding = new Set<object>();
  const walk = (value: unknown): void => {
    budget -= typeof value === "string" ? value.length + 1 : 1;
    if (budget < 0)
      throw InputError.ofDocument(
        `not valid YAML: its aliases expand it to more than ${limit} characters of text (a document holds at most 8 MiB of items)`,
      );
    if (typeof value !== "object" || value === null) return;
    if (holding.has(value))
      throw InputError.ofDocument(
        "not valid YAML: an alias refers to a value that holds it (a value cannot hold itself)",
      );
    holding.add(value);
    for (const [key, entry] of Object.entries(value)) {
      budget -= key.length;
      walk(entry);
    }
    holding.delete(value);
  };
  walk(document);
}

const firstLine = (error: unknown) => (error instanceof Error ? error.message : String(error)).split("\n")[0];

/** One test case of the file; `path` is its place in the document; `withId` lets it name its id. */
export function testCaseFromFile(
  value: unknown,
  path: string,
  { withId = false }: { withId?: boolean } = {},
): TestCaseInput {
  const testCase = object(value, path, withId ? documentTestCaseFields : testCaseFields);
  const id = withId ? optionalString(testCase.id, child(path, "id")) : undefined;
  return {
    ...(id !== undefined && { id }),
    name: string(testCase.name, child(path, "name")),
    tags: testCase.tags === undefined ? [] : stringList(testCase.tags, child(path, "tags")),
    enabled: testCase.enabled === undefined ? undefined : boolean(testCase.enabled, child(path, "enabled")),
    recordTrace:
      testCase.recordTrace === undefined ? false : boolean(testCase.recordTrace, child(path, "recordTrace")),
    retries: testCase.retries === undefined ? 0 : retriesFromFile(testCase.retries, child(path, "retries")),
    ...stepsOrSpec(testCase, path),
    path,
  };
}

/** A test case's steps, or its Playwright spec (exactly one of them). */
function stepsOrSpec(
  testCase: Record<string, unknown>,
  path: string,
): { steps: Step[]; playwright?: PlaywrightInput } {
  if (testCase.playwright === undefined)
    return { steps: stepsFromFile(testCase.steps, child(path, "steps")) };
  if (testCase.steps !== undefined)
    throw new InputError(
      child(path, "steps"),
      "must be left out of a Playwright spec case: a test case holds steps or a spec, not both",
    );
  const at = child(path, "playwright");
  const spec = object(testCase.playwright, at, ["spec", "files"]);
  return {
    steps: [],
    playwright: {
      spec: fileFromFile(spec.spec, child(at, "spec")),
      files:
        spec.files === undefined
          ? []
          : list(spec.files, child(at, "files")).map((entry, index) =>
              fileFromFile(entry, item(child(at, "files"), index)),
            ),
    },
  };
}

function fileFromFile(value: unknown, path: string): PlaywrightFileInput {
  const file = object(value, path, ["path", "source"]);
  return { path: string(file.path, child(path, "path")), source: string(file.source, child(path, "source")) };
}

/** A test case in the file format: what testCaseFromFile reads back as the same test case. */
export function testCaseToFile(testCase: {
  name: string;
  tags: readonly string[];
  enabled: boolean;
  /** Absent: false. */
  recordTrace?: boolean;
  /** Absent: 0. */
  retries?: number;
  steps: readonly Step[];
  /** A Playwright spec case's files; written instead of steps. */
  playwright?: PlaywrightInput | undefined;
}): { [key: string]: JsonValue } {
  const { playwright } = testCase;
  return {
    name: testCase.name,
    ...(testCase.tags.length > 0 && { tags: [...testCase.tags] }),
    // Written only when false: a reader takes an absent `enabled` as true.
    ...(!testCase.enabled && { enabled: false }),
    // Written only when true: a reader takes an absent `recordTrace` as false.
    ...(testCase.recordTrace && { recordTrace: true }),
    // Written only when not 0: a reader takes an absent `retries` as 0.
    ...(testCase.retries ? { retries: testCase.retries } : {}),
    ...(playwright
      ? {
          playwright: {
            spec: { path: playwright.spec?.path ?? "", source: playwright.spec?.source ?? "" },
            ...(playwright.files.length > 0 && {
              files: playwright.files.map(({ path, source }) => ({ path, source })),
            }),
          },
        }
      : { steps: testCase.steps.map(stepToFile) }),
  };
}
