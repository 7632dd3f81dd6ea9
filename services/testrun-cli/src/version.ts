/** The CLI's version: package.json's (test/testrun-cli.test.ts keeps them equal). */
export const version = "0.1.0";
