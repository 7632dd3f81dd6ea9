// Mocha's configuration. `npx mocha` (what `make test-only` runs) runs every test file; `npx mocha
// <file>…` runs only the files named: mocha appends a config's `spec` to the command line's, so the
// whole list is given only when the command line names no test file.
//
// The whole list runs in parallel worker processes (TEST_JOBS, default 3): a file waits on the
// processes it starts, its browser, its timers; with two workers the two cores were still idle 17%
// of the time, with three 6% (mocha 441 s against 393 s, 1,197 tests, docs/development.md). Each
// worker has a Redis of its own (test/global-setup.ts); with a REDIS_URL of your own the files run
// one at a time, as they do when named on the command line.
const { globSync } = require("node:fs");

const namesTestFiles = process.argv.slice(2).some((arg) => /\.test\.ts$/.test(arg));
const parallel = !namesTestFiles && !process.env.REDIS_URL && process.env.TEST_JOBS !== "1";

// The slowest files first (each starts whole systems, browsers or many processes), so that no
// long file starts last and runs alone: a worker that finishes early takes the short files.
const slowestFirst = [
  "test/**/*.browser.test.ts",
  "test/**/*.e2e.test.ts",
  // Some 20 s each: the image's replay, helm templates, every service's start.
  "test/{image,chart,services,monitoring}.test.ts",
  "services/{cli,executor,kit,automation}/test/**/*.test.ts",
  "services/*/test/**/*.test.ts",
  "test/**/*.test.ts",
];
const allFiles = [...new Set(slowestFirst.flatMap((pattern) => globSync(pattern).sort()))];

module.exports = {
  "node-option": ["import=tsx", "conditions=source"],
  require: ["test/global-setup.ts"],
  spec: namesTestFiles ? [] : allFiles,
  parallel,
  ...(parallel && { jobs: Number(process.env.TEST_JOBS ?? 3) }),
  timeout: 30000,
  exit: false,
  reporter: "test/reporter.cjs",
};
