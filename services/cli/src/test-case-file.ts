// Test case files given to `testrunctl case create --file`, read with the shared file format
// (@testrun/content-file); a mistake in one is the operator's to fix (exit code 2), named with the
// file and the field's path.
import { formatOfFileName, InputError, parseTestCaseFile, type TestCaseInput } from "@testrun/content-file";
import { UsageError } from "./errors.js";

export type { TestCaseInput };

/** Every test case of the file's text; `fileName` ("stdin" for standard input) picks JSON or YAML. */
export function readTestCaseFile(text: string, fileName: string): TestCaseInput[] {
  try {
    return parseTestCaseFile(text, formatOfFileName(fileName));
  } catch (error) {
    if (error instanceof InputError) throw new UsageError(`${fileName}: ${error.message}`);
    throw error;
  }
}
