// testrunctl as a library: the command functions, for tooling (e.g. `make run` seeding a demo
// organization) that would rather call them than run the binary.
export * from "./arguments.js";
export * from "./commands/content.js";
export * from "./commands/credits.js";
export * from "./commands/keys.js";
export * from "./commands/organizations.js";
export * from "./commands/projects.js";
export * from "./commands/variables.js";
export { type CliContext, createCliContext, defaultUrls, operatorActor } from "./context.js";
export { CommandError, describeServiceError, ServiceCallError, UsageError } from "./errors.js";
export { type CliIo, runCli } from "./program.js";
export { readCaseFile, readContentFile, readTestCaseFile, type TestCaseInput } from "./test-case-file.js";
