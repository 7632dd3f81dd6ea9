// @testrun/testing: every harness the tests share (docs/development.md, "Tests"). A package of its
// own, never in the image (deploy/image-layout.mjs leaves out a package with devDependencies only).
// `@testrun/testing/grpc-js` (a grpc-js client from proto/) and `@testrun/testing/redaction-encodings`
// are subpaths, so that a test importing this does not load them.
export * from "./bodies.js";
export * from "./catalog.js";
export * from "./catalog-in-process.js";
export * from "./egress.js";
export * from "./gateway.js";
export * from "./in-process.js";
export * from "./metrics.js";
export * from "./migrated.js";
export * from "./minio.js";
export * from "./process.js";
export * from "./process-scope.js";
export * from "./redis-users.js";
export * from "./runs.js";
export * from "./runs-in-process.js";
export * from "./servers.js";
export * from "./tokens.js";
export * from "./wait.js";
