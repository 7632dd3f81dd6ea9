// The Content-Security-Policies the console's answers carry (its pages', an artifact's, the trace
// viewer's), exported as `@testrun/console/policies` for the whole-system browser tests, which check
// what a browser receives against them.
export { artifactPolicy } from "./artifacts.js";
export { contentSecurityPolicy } from "./security.js";
export { traceViewerPolicy, traceViewerRoot } from "./trace-viewer.js";
