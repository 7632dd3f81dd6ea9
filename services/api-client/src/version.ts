/**
 * The version of testrun (the CLI), its client and its MCP tools (the MCP server reports it):
 * services/testrun-cli/package.json's (services/testrun-cli/test/units.test.ts keeps them equal).
 */
export const version = "0.1.0";
