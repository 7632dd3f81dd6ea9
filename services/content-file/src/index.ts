// A project's content as files people write and review: test cases with their steps, and whole
// content documents (test cases and plans), in JSON or YAML (docs/runs.md, "Test cases: the step
// format" and "Content documents"). Browser-safe: the console's web app uses it too, and takes from
// here what it must say as the catalog does (a step's bounds, who changed a version).

export { type AriaRole, ariaRoles } from "./browser-steps.js";
export { changedByName } from "./changed-by.js";
export {
  type ContentDocument,
  contentDocumentFromFile,
  contentDocumentToFile,
  type EnvironmentInput,
  importItemsOf,
  readContentDocument,
  type StoredContent,
  type StoredEnvironment,
  type StoredTestCase,
  type StoredTestPlan,
  type TestPlanInput,
  writeContentDocument,
} from "./content-document.js";
export { child, InputError, item, type JsonValue } from "./input.js";
export {
  checkPlaywright,
  helperFilePattern,
  helpersOf,
  type PlaywrightFileInput,
  type PlaywrightInput,
  pathProblem,
  playwrightBounds,
  type SpecCaseInput,
  sourceBytes,
  specCasesOfFolder,
  specFilePattern,
} from "./playwright.js";
export { browserStepBounds, httpMethods, httpStepBounds, stepMaxMs } from "./step-bounds.js";
export { fileFieldPath, httpStepOf, stepFromFile, stepsFromFile, stepToFile } from "./steps.js";
export {
  type FileFormat,
  formatOfFileName,
  isContentDocument,
  parseDocument,
  parseTestCaseFile,
  type TestCaseInput,
  testCaseFromFile,
  testCasesFromFile,
  testCaseToFile,
} from "./test-case-file.js";
