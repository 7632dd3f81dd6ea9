// Files given to testrunctl (`case create --file`, `content import --file`), read with the shared
// file format (@testrun/content-file); a mistake in one is the operator's to fix (exit code 2),
// named with the file and the field's path.
import {
  type ContentDocument,
  contentDocumentFromFile,
  formatOfFileName,
  InputError,
  isContentDocument,
  parseDocument,
  parseTestCaseFile,
  readContentDocument,
  type TestCaseInput,
  testCasesFromFile,
} from "@testrun/content-file";
import { UsageError } from "./errors.js";

export type { TestCaseInput };

/** Runs a reader, making its InputError a UsageError naming the file. */
function inFile<T>(fileName: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof InputError) throw new UsageError(`${fileName}: ${error.message}`);
    throw error;
  }
}

/** Every test case of the file's text; `fileName` ("stdin" for standard input) picks JSON or YAML. */
export function readTestCaseFile(text: string, fileName: string): TestCaseInput[] {
  return inFile(fileName, () => parseTestCaseFile(text, formatOfFileName(fileName)));
}

/**
 * What `case create --file` reads: one test case, a list of them, or a content document, whose
 * test plans, environments and variables are read (and checked) too. The other forms hold none.
 */
export function readCaseFile(text: string, fileName: string): ContentDocument {
  return inFile(fileName, () => {
    const document = parseDocument(text, formatOfFileName(fileName));
    if (isContentDocument(document)) return contentDocumentFromFile(document);
    return { environments: [], variables: [], testCases: testCasesFromFile(document), testPlans: [] };
  });
}

/** A content document (`content import --file`). */
export function readContentFile(text: string, fileName: string): ContentDocument {
  return inFile(fileName, () => readContentDocument(text, formatOfFileName(fileName)));
}
