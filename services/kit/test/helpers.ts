// Moved to @testrun/kit/testing (tokens.ts). Kept for the tests of other packages that still
// import it by path (gateway, executor), until they import @testrun/kit/testing themselves.
export { testTokens } from "@testrun/kit/testing";
