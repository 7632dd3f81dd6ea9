// The library of @testrun/testrun-cli: the CLI's parts. The typed client of the /v1 REST API it
// uses is @testrun/api-client.

export { downloadArtifacts } from "./artifacts.js";
export { type Io, main, type Result } from "./cli.js";
export { junitXml } from "./junit.js";
export { ExitCode, exitCodeOf } from "./outcome.js";
export { markdownSummary } from "./summary.js";
export { type WaitOptions, waitForRun } from "./wait.js";
