// The browser-projects table of `make bench` (BENCH_ONLY=browser-projects runs it alone): browser
// tests a minute through the executor's browser pool when tests of several projects share an
// executor (docs/security.md, "The browser's sandbox"): a browser process serves one project at a
// time, so a test of another project than the browser's waits for a launch. Three mixes, each with
// the demo target's 3-step sign-in test (open /login, type the email, click Sign in), N at a time
// (BROWSER_CONTEXTS): one project; two projects in turn; a new project every test (a launch each).
// Pages reach a demo target of this process directly (no egress proxy, no service): the figure is
// the pool's. BENCH_PROJECTS_TESTS (40) and BENCH_PROJECTS_CONTEXTS (2) size it.
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { BrowserPool } from "../../services/executor/src/browser/pool.js";
import { createDemoTarget } from "../../services/executor/src/demo-target/server.js";
import { runSteps } from "../../services/executor/src/steps/runner.js";
import { browserTargetEgress, chromiumPath, stepsOf } from "../../services/executor/test/browser-target.js";

const steps = stepsOf([
  { name: "open", browser: { goto: { url: "/login" } } },
  { name: "email", browser: { fill: { locator: { label: "Email" }, value: "bench@demo.example" } } },
  { name: "sign in", browser: { click: { locator: { role: "button", name: "Sign in" } } } },
]);

export async function browserProjectsTable(options: { tests: number; contexts: number }): Promise<void> {
  const { tests, contexts } = options;
  const server = createDemoTarget({ user: "bench", password: "bench-password" });
  server.listen(0, "127.0.0.2");
  await once(server, "listening");
  const baseUrl = `http://127.0.0.2:${(server.address() as AddressInfo).port}`;

  /** Runs `tests` tests, `contexts` at a time, the i-th of project `projectOf(i)`: tests a minute. */
  const measure = async (projectOf: (i: number) => string) => {
    const pool = new BrowserPool({ executablePath: chromiumPath, contexts });
    try {
      await pool.launch(); // as the executor's check at start: outside the figure
      let next = 0;
      const worker = async () => {
        while (next < tests) {
          const project = projectOf(next++);
          const outcome = await runSteps(steps, {
            baseUrl,
            variables: {},
            egress: browserTargetEgress,
            browsers: pool,
            project,
          });
          if (!outcome.passed) throw new Error(outcome.summary);
        }
      };
      const began = performance.now();
      await Promise.all(Array.from({ length: contexts }, worker));
      return { perMinute: (tests / (performance.now() - began)) * 60_000, launches: pool.launches };
    } finally {
      await pool.close();
    }
  };

  try {
    console.log(
      `\nBrowser pool, ${tests} tests of 3 steps, ${contexts} at a time:\n\n` +
        "| projects | tests/min | browser launches |\n| --- | --- | --- |",
    );
    for (const [label, projectOf] of [
      ["one", () => "prj_one"],
      ["two in turn", (i: number) => `prj_${i % 2}`],
      ["a new one each test", (i: number) => `prj_${i}`],
    ] as const) {
      const { perMinute, launches } = await measure(projectOf);
      console.log(`| ${label} | ${perMinute.toFixed(0)} | ${launches} |`);
    }
  } finally {
    server.close();
    server.closeAllConnections();
  }
}
