// A project's content as files people write and review: test cases with their steps, in JSON or
// YAML (docs/runs.md, "Test cases: the step format"). Browser-safe: the console's web app uses it too.
export { child, InputError, item, type JsonValue } from "./input.js";
export { fileFieldPath, stepFromFile, stepsFromFile, stepToFile } from "./steps.js";
export {
  type FileFormat,
  formatOfFileName,
  parseDocument,
  parseTestCaseFile,
  type TestCaseInput,
  testCaseFromFile,
  testCaseToFile,
} from "./test-case-file.js";
