// Mocha's configuration. `npx mocha` (what `make test-only` runs) runs every test file; `npx mocha
// <file>…` runs only the files named: mocha appends a config's `spec` to the command line's, so the
// whole list is given only when the command line names no test file.
const namesTestFiles = process.argv.slice(2).some((arg) => /\.test\.ts$/.test(arg));

module.exports = {
  "node-option": ["import=tsx", "conditions=source"],
  require: ["test/global-setup.ts"],
  spec: namesTestFiles ? [] : ["services/*/test/**/*.test.ts", "test/**/*.test.ts"],
  timeout: 30000,
  exit: false,
  reporter: "test/reporter.cjs",
};
