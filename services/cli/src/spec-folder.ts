// A folder of Playwright specs (`testrunctl content import --specs <folder>`): its spec and helper
// files read with paths relative to the folder (@testrun/content-file/spec-folder), and made a content document of one test case per
// spec file (@testrun/content-file specCasesOfFolder), matched by the spec's path on import.
import { type ContentDocument, specCasesOfFolder } from "@testrun/content-file";
import { SpecFolderError, specFolderFiles } from "@testrun/content-file/spec-folder";
import { UsageError } from "./errors.js";

/** The spec and helper files under `folder` (@testrun/content-file/spec-folder). */
async function filesOf(folder: string) {
  try {
    return await specFolderFiles(folder);
  } catch (error) {
    if (!(error instanceof SpecFolderError)) throw error;
    throw new UsageError(`${folder}: cannot read the folder (${error.message})`);
  }
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
