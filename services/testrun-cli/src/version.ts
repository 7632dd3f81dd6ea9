/** The CLI's version: package.json's (services/testrun-cli/test/units.test.ts keeps them equal). */
export const version = "0.1.0";
