// `testrun push <folder>` (docs/pipelines.md, "Pushing specs"): a repository's Playwright specs
// made one test case each, with the helper files each imports, and sent as one content document to
// POST /v1/content/import with the content token (TESTRUN_CONTENT_TOKEN). Which files are specs,
// which are helpers and how a case is made of them is @testrun/content-file's (the same rules as
// `testrunctl content import --specs`); this module reads the folder and says what happened.
import type { ImportedItem, ImportResult } from "@testrun/api-client";
import { checkPlaywright, specCasesOfFolder } from "@testrun/content-file/playwright";
import { SpecFolderError, specFolderFiles } from "@testrun/content-file/spec-folder";
import { UsageError } from "./args.js";

/** The most spec files one push sends: a content document's bound on test cases. */
export const maxSpecFiles = 500;
/** The most bytes of sources one push reads: what the import takes in one request (8 MiB). */
export const maxPushBytes = 8 * 1024 * 1024;

/** The spec and helper files under `folder` (@testrun/content-file/spec-folder), at most maxPushBytes. */
async function filesOf(folder: string) {
  try {
    return await specFolderFiles(folder, { maxBytes: maxPushBytes });
  } catch (error) {
    if (!(error instanceof SpecFolderError)) throw error;
    throw new UsageError(
      error.reason === "too-large"
        ? `push: the spec and helper files under ${folder} come to more than ${maxPushBytes / 1024 / 1024} MiB, more than one push sends; push a smaller folder`
        : `push: cannot read the folder ${folder} (${error.message})`,
    );
  }
}

/**
 * The content document of a folder: one test case per spec file, each with the helpers it imports
 * and `tags` (push --tags; none without it: an import makes each case as the document says).
 */
export async function specDocument(
  folder: string,
  tags: readonly string[] = [],
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
        ...(tags.length > 0 && { tags: [...tags] }),
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
