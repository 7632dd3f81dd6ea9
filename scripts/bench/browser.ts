// The browser table of `make bench` (BENCH_ONLY=browser runs it alone): browser tests a minute per
// executor process against a floor, and the executor's memory with N browser contexts.
//
// The floor is this process driving the same Chromium through playwright-core: the same 3-step test
// (open the demo's sign-in page, type the email, click Sign in) in a fresh context per test, N at a
// time. The system is an executor process with BROWSER_CONTEXTS = CONCURRENCY = N running a run of
// the same test case through the runs service, its pages going through the executor's egress proxy;
// its figure is the run's tests over the time from POST /v1/runs to finished. Resident memory is the
// executor's process tree (Node plus Chromium's processes), sampled while the run goes on.
import { createCliContext, createTestCases, readTestCaseFile } from "@testrun/cli";
import { startServiceProcess } from "@testrun/testing";
import { chromium } from "playwright-core";
import type { System } from "../system.js";
import { gatewayRunner, treeRssMiB } from "./measure.js";

export interface BrowserTableOptions {
  system: System;
  projectId: string;
  secret: string;
  /** Browser contexts (and executor concurrency) measured, e.g. [1, 2, 4]. */
  levels: number[];
  /** Tests per measurement. */
  tests: number;
}

const caseYaml = (count: number) =>
  Array.from(
    { length: count },
    (_, i) => `- name: bench sign-in ${i}
  tags: [bench-browser]
  steps:
    - name: open
      browser: { goto: { url: /login } }
    - name: email
      browser: { fill: { locator: { label: Email }, value: bench@demo.example } }
    - name: sign in
      browser: { click: { locator: { role: button, name: Sign in } } }
`,
  ).join("");

/** Runs `count` tests of the floor's 3 steps, `concurrency` at a time: tests a minute. */
async function floorTestsPerMinute(baseUrl: string, count: number, concurrency: number): Promise<number> {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update"],
  });
  try {
    const oneTest = async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${baseUrl}/login`, { waitUntil: "load" });
      await page.getByLabel("Email").fill("bench@demo.example");
      await page.getByRole("button", { name: "Sign in" }).click();
      await context.close();
    };
    let started = 0;
    const worker = async () => {
      while (started < count) {
        started++;
        await oneTest();
      }
    };
    await oneTest(); // warm-up, outside the figure
    const began = performance.now();
    await Promise.all(Array.from({ length: concurrency }, worker));
    return (count / (performance.now() - began)) * 60_000;
  } finally {
    await browser.close();
  }
}

export async function browserTable(options: BrowserTableOptions): Promise<void> {
  const { system, projectId, secret, levels, tests } = options;
  const cases = await createTestCases(createCliContext(system.env), {
    projectId,
    testCases: readTestCaseFile(caseYaml(tests), "bench-browser.yaml"),
  });
  const runOf = gatewayRunner(system.gatewayUrl, secret);

  // The system's own executor would take the tests too: only the measured one runs.
  await system.processes.get("executor")?.stop();
  system.processes.delete("executor");
  console.log(
    `\nBrowser tests (the 3-step sign-in test, ${tests} a measurement, a fresh context per test):\n\n` +
      "| contexts | floor tests/min | executor tests/min | of the floor | executor + Chromium RSS peak (MiB) |\n" +
      "| --- | --- | --- | --- | --- |",
  );
  for (const contexts of levels) {
    const floor = await floorTestsPerMinute(system.demoTargetUrl, tests, contexts);
    const executor = await startServiceProcess(
      "executor",
      { ...system.executorEnv, PORT: "0", CONCURRENCY: String(contexts), BROWSER_CONTEXTS: String(contexts) },
      { keepOutput: false },
    );
    try {
      await runOf([cases[0]?.id ?? ""]); // warm-up: Chromium launched, outside the figure
      let peak = 0;
      const sampler = setInterval(() => {
        peak = Math.max(peak, treeRssMiB(executor.process.pid));
      }, 200);
      const began = performance.now();
      const run = await runOf(cases.map((c) => c.id));
      const perMinute = (tests / (performance.now() - began)) * 60_000;
      clearInterval(sampler);
      if (run.passedTests !== tests)
        throw new Error(`only ${run.passedTests} of ${tests} browser tests passed`);
      console.log(
        `| ${contexts} | ${floor.toFixed(0)} | ${perMinute.toFixed(0)} | ${((perMinute / floor) * 100).toFixed(0)}% | ${peak.toFixed(0)} |`,
      );
    } finally {
      await executor.stop();
    }
  }
}
