// A folder of Playwright specs (`testrunctl content import --specs <folder>`): its spec and helper
// files read with paths relative to the folder, and made a content document of one test case per
// spec file (@testrun/content-file specCasesOfFolder), matched by the spec's path on import.
import { readdir, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import {
  type ContentDocument,
  helperFilePattern,
  type PlaywrightFileInput,
  specCasesOfFolder,
  specFilePattern,
} from "@testrun/content-file";
import { UsageError } from "./errors.js";

/** Folders never holding the project's own specs: dependencies and tools' output. */
const skipped = new Set(["node_modules", "test-results", "playwright-report", "blob-report"]);

/** Files that configure a project rather than being imported by a spec. */
const configFile = /(^|\/)(playwright\.config\.[cm]?[jt]s|package(-lock)?\.json|tsconfig[^/]*\.json)$/;

/** The spec and helper files under `folder` (hidden folders and `skipped` left out), paths with "/". */
async function filesOf(folder: string): Promise<PlaywrightFileInput[]> {
  let entries: string[];
  try {
    entries = await readdir(folder, { recursive: true });
  } catch (error) {
    throw new UsageError(`${folder}: cannot read the folder (${(error as Error).message})`);
  }
  const files: PlaywrightFileInput[] = [];
  for (const entry of entries.sort()) {
    const path = relative(folder, join(folder, entry)).split(sep).join("/");
    const parts = path.split("/");
    if (parts.some((part) => part.startsWith(".") || skipped.has(part))) continue;
    if (configFile.test(path) || !(specFilePattern.test(path) || helperFilePattern.test(path))) continue;
    try {
      files.push({ path, source: await readFile(join(folder, entry), "utf8") });
    } catch {
      // A folder whose name ends like a file (pages.ts/): nothing to read.
    }
  }
  return files;
}

/** The content document of a folder of specs; none in it is the operator's mistake. */
export async function readSpecFolder(folder: string): Promise<ContentDocument> {
  const testCases = specCasesOfFolder(await filesOf(folder));
  if (testCases.length === 0)
    throw new UsageError(
      `${folder}: no spec file (*.spec.ts, *.spec.js, *.test.ts, *.test.js) in the folder`,
    );
  return { environments: [], variables: [], testCases, testPlans: [] };
}
