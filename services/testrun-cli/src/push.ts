// `testrun push <folder>` (docs/pipelines.md, "Pushing specs"): a repository's Playwright specs
// made one test case each, with the helper files each imports, and sent as one content document to
// POST /v1/content/import with the content token (TESTRUN_CONTENT_TOKEN). Which files are specs,
// which are helpers and how a case is made of them is @testrun/content-file's (the same rules as
// `testrunctl content import --specs`); this module reads the folder and says what happened.
import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { ImportedItem, ImportResult } from "@testrun/api-client";
import {
  checkPlaywright,
  helperFilePattern,
  type PlaywrightFileInput,
  specCasesOfFolder,
  specFilePattern,
} from "@testrun/content-file/playwright";
import { UsageError } from "./args.js";

/** The most spec files one push sends: a content document's bound on test cases. */
export const maxSpecFiles = 500;
/** The most bytes of sources one push reads: what the import takes in one request (8 MiB). */
export const maxPushBytes = 8 * 1024 * 1024;

/** Folders never holding the project's own specs: dependencies, tools' output. */
const skipped = new Set(["node_modules", "test-results", "playwright-report", "blob-report"]);
/** Files that configure a project rather than being imported by a spec. */
const configFile = /(^|\/)(playwright\.config\.[cm]?[jt]s|package(-lock)?\.json|tsconfig[^/]*\.json)$/;

/** The spec and helper files under `folder` (hidden folders and `skipped` left out), paths with "/". */
async function filesOf(folder: string): Promise<PlaywrightFileInput[]> {
  let entries: string[];
  try {
    if (!(await stat(folder)).isDirectory()) throw new Error("not a folder");
    entries = await readdir(folder, { recursive: true });
  } catch (error) {
    throw new UsageError(`push: cannot read the folder ${folder} (${(error as Error).message})`);
  }
  const files: PlaywrightFileInput[] = [];
  let bytes = 0;
  for (const entry of entries.sort()) {
    const path = relative(folder, join(folder, entry)).split(sep).join("/");
    if (path.split("/").some((part) => part.startsWith(".") || skipped.has(part))) continue;
    if (configFile.test(path) || !(specFilePattern.test(path) || helperFilePattern.test(path))) continue;
    const file = join(folder, entry);
    if (!(await stat(file)).isFile()) continue;
    const source = await readFile(file, "utf8");
    bytes += Buffer.byteLength(source);
    // Checked as it reads, so a folder of generated megabytes is refused before it fills memory.
    if (bytes > maxPushBytes)
      throw new UsageError(
        `push: the spec and helper files under ${folder} come to more than ${maxPushBytes / 1024 / 1024} MiB, more than one push sends; push a smaller folder`,
      );
    files.push({ path, source });
  }
  return files;
}

/** The content document of a folder: one test case per spec file, each with the helpers it imports. */
export async function specDocument(
  folder: string,
): Promise<{ document: { testCases: unknown[] }; specs: number; helpers: number }> {
  const cases = specCasesOfFolder(await filesOf(folder));
  if (cases.length === 0)
    throw new UsageError(`push: no spec file (*.spec.ts, *.spec.js, *.test.ts, *.test.js) under ${folder}`);
  if (cases.length > maxSpecFiles)
    throw new UsageError(
      `push: ${cases.length} spec files under ${folder}, more than the ${maxSpecFiles} one push sends; push its folders one by one`,
    );
  // Every bound of a spec case checked here first, so that all problems are named at once, by file.
  const problems: string[] = [];
  for (const testCase of cases)
    checkPlaywright(testCase.playwright, testCase.playwright.spec?.path ?? testCase.name, (field, problem) =>
      problems.push(`${field}: ${problem}`),
    );
  if (problems.length > 0) throw new UsageError(`push: nothing was sent:\n  ${problems.join("\n  ")}`);
  return {
    document: {
      testCases: cases.map(({ name, playwright }) => ({
        name,
        playwright: {
          spec: playwright.spec,
          ...(playwright.files.length > 0 && { files: playwright.files }),
        },
      })),
    },
    specs: cases.length,
    helpers: new Set(cases.flatMap((c) => c.playwright.files.map((f) => f.path))).size,
  };
}

const verbs: Record<ImportedItem["outcome"], string> = {
  created: "created",
  changed: "updated",
  unchanged: "unchanged",
  unknown: "not judged",
};

/** What a push did, one line per spec and a summary: what a person reads in the CI log. */
export function pushLines(result: ImportResult): string[] {
  const lines = result.testCases.map((item) => {
    const fields = item.changedFields?.length ? ` (${item.changedFields.join(", ")})` : "";
    return `  ${verbs[item.outcome].padEnd(9)} ${item.name}${fields}${item.id ? `  ${item.id}` : ""}`;
  });
  const count = (outcome: ImportedItem["outcome"]) =>
    result.testCases.filter((item) => item.outcome === outcome).length;
  const summary = `${count("created")} created, ${count("changed")} updated, ${count("unchanged")} unchanged`;
  lines.push(
    result.applied
      ? `Pushed ${result.testCases.length} spec${result.testCases.length === 1 ? "" : "s"}: ${summary}.`
      : `Dry run, nothing written: ${summary} if pushed.`,
  );
  if (result.otherTestCases > 0)
    lines.push(`${result.otherTestCases} other test case(s) of the project are left as they are.`);
  return lines;
}
