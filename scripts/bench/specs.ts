// The Playwright specs table of `make bench` (BENCH_ONLY=specs runs it alone; issue 42, "Speed"):
// specs a minute per executor process against a floor, and the executor's memory meanwhile.
//
// The spec: three short tests against the demo target (its home page, its sign-in page, signing
// in with the DEMO_PASSWORD variable), BENCH_SPECS copies of it as test cases of the seeded demo
// project.
//
// The floor is @playwright/test's runner started by this process as `npx playwright test` would
// start it (the repo's cli.js with this node, without npm's own start-up), once per spec, in a
// folder holding the spec and a user's configuration: one worker, chromium at CHROMIUM_PATH
// (/usr/bin/chromium) by launchOptions.executablePath, the JSON reporter. Beside it, for
// information, all the copies in one `playwright test` (its runner and worker started once).
//
// The system: an executor process of the built code (the image's), PLAYWRIGHT_SPECS=sandboxed (the
// default: each spec's runner in the user-code sandbox, which needs root) and then unsandboxed (a
// plain child process), running a run of the copies through the whole system, its specs' pages
// through its egress proxy; its figure is the run's specs over the time from POST /v1/runs to
// finished. Both sides run BENCH_SPECS_CONCURRENCY (1) specs at a time (the executor's
// CONCURRENCY). Resident memory is the executor's process tree (Node, its browser pool's idle
// Chromium, the runners and their Chromium), peak and median of samples while the run goes on.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createCliContext } from "@testrun/cli";
import { repoRoot, startServiceProcess } from "@testrun/testing";
import { playwrightCli, playwrightTestDir } from "../../services/executor/src/playwright/workspace.js";
import { demoCredentials } from "../demo/seed.js";
import type { System } from "../system.js";
import { gatewayRunner, rssMiB, treeRssMiB } from "./measure.js";

export interface SpecsTableOptions {
  system: System;
  projectId: string;
  secret: string;
  /** services/kit/dist/launch.js: the executor runs the built code, as the system's services do. */
  launcher: string;
  /** Specs per measurement. */
  specs: number;
  /** Specs at once on each side (the executor's CONCURRENCY, the floor's runners). */
  concurrency: number;
}

const specSource = `import { expect, test } from "@playwright/test";

test("the home page links to sign-in", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("link", { name: "Sign in" })).toBeVisible();
});

test("the sign-in page asks for the email", async ({ page }) => {
  await page.goto("/login");
  await expect(page.getByLabel("Email")).toBeVisible();
});

test("signs in", async ({ page }) => {
  await page.goto("/login");
  await page.getByLabel("Email").fill(${JSON.stringify(demoCredentials.email)});
  await page.getByLabel("Password").fill(process.env.DEMO_PASSWORD ?? "");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("greeting")).toHaveText(${JSON.stringify(`Hello, ${demoCredentials.user}`)});
});
`;
const testsPerSpec = 3;
const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Runs `count` jobs, `concurrency` at a time: the wall time in ms. */
async function timed(count: number, concurrency: number, job: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (next < count) await job(next++);
  };
  const began = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return performance.now() - began;
}

/** Peak and median of a process tree's resident memory, sampled every 200 ms while `work` runs. */
async function sampled<T>(pid: number | undefined, work: () => Promise<T>) {
  const samples: number[] = [];
  const node: number[] = [];
  const sample = () => {
    samples.push(treeRssMiB(pid));
    node.push(rssMiB(pid));
  };
  const sampler = setInterval(sample, 200);
  try {
    const result = await work();
    sample();
    const sorted = [...samples].sort((a, b) => a - b);
    return {
      result,
      peak: Math.max(...samples),
      median: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN,
      nodePeak: Math.max(...node),
    };
  } finally {
    clearInterval(sampler);
  }
}

/** The floor's folder: `copies` copies of the spec, a user's configuration, @playwright/test beside them. */
async function floorFolder(baseUrl: string, copies: number) {
  const dir = await mkdtemp(join(tmpdir(), "bench-specs-"));
  await mkdir(join(dir, "node_modules", "@playwright"), { recursive: true });
  await symlink(playwrightTestDir, join(dir, "node_modules", "@playwright", "test"), "dir");
  await mkdir(join(dir, "tests"));
  for (let i = 0; i < copies; i++) await writeFile(join(dir, "tests", `demo-${i}.spec.ts`), specSource);
  const config = (name: string, outputFile: string) =>
    writeFile(
      join(dir, name),
      `export default ${JSON.stringify({
        testDir: "tests",
        workers: 1,
        reporter: [["json", { outputFile }]],
        outputDir: join(dir, "results"),
        use: { baseURL: baseUrl, launchOptions: { executablePath: chromiumPath } },
      })};\n`,
    );
  return { dir, config };
}

/**
 * One `playwright test` in `dir` with `configName` (of `specs` specs): throws unless every test
 * passed. Resolves with the peak resident memory of the runner's process tree (MiB).
 */
async function playwrightTest(
  dir: string,
  configName: string,
  reportPath: string,
  args: string[],
  specs: number,
) {
  const child = spawn(process.execPath, [playwrightCli, "test", "--config", configName, ...args], {
    cwd: dir,
    env: { ...process.env, CI: "1", FORCE_COLOR: "0", DEMO_PASSWORD: demoCredentials.password },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, treeRssMiB(child.pid));
  }, 200);
  const [code] = await once(child, "close");
  clearInterval(sampler);
  const report = JSON.parse(await readFile(reportPath, "utf8").catch(() => "{}")) as {
    stats?: { expected?: number; unexpected?: number };
  };
  if (code !== 0 || report.stats?.expected !== specs * testsPerSpec)
    throw new Error(
      `the floor's playwright test exited ${code} with ${JSON.stringify(report.stats)}: ${stderr.slice(-2000)}`,
    );
  return peak;
}

const loadAverage = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(" ");

export async function specsTable(options: SpecsTableOptions): Promise<void> {
  const { system, projectId, secret, launcher, specs, concurrency } = options;
  const loadBefore = loadAverage();
  const ctx = createCliContext(system.env);
  const cases = [];
  for (let i = 0; i <= specs; i++) {
    const { testCase } = await ctx.catalog.createTestCase({
      actor: ctx.actor,
      projectId,
      name: `bench demo spec ${i}`,
      tags: ["bench-specs"],
      playwright: { spec: { path: `tests/demo-${i}.spec.ts`, source: specSource } },
    });
    cases.push(testCase?.id ?? "");
  }
  // The first is the warm-up's, the others the measurement's.
  const [warmup = "", ...measured] = cases;
  const runThrough = gatewayRunner(system.gatewayUrl, secret);
  const runOf = async (ids: string[]) => {
    const run = await runThrough(ids);
    if (run.passedTests !== ids.length) {
      const failed = run.tests?.find((test) => test.status !== "passed");
      throw new Error(`${run.passedTests} of ${ids.length} specs passed: ${failed?.summary ?? "?"}`);
    }
  };

  // The floor, first: nothing of the system's executor is running meanwhile.
  await system.processes.get("executor")?.stop();
  system.processes.delete("executor");
  const folder = await floorFolder(system.demoTargetUrl, specs);
  const floor = { perSpec: Number.NaN, oneRunner: Number.NaN, peak: Number.NaN };
  try {
    await folder.config("one.config.mjs", join(folder.dir, "one.json"));
    // One configuration per runner at once, each with its own report.
    for (let slot = 0; slot < concurrency; slot++)
      await folder.config(`slot-${slot}.config.mjs`, join(folder.dir, `slot-${slot}.json`));
    const free = Array.from({ length: concurrency }, (_, slot) => slot);
    const oneSpec = async (i: number) => {
      const slot = free.pop() ?? 0;
      try {
        const peak = await playwrightTest(
          folder.dir,
          `slot-${slot}.config.mjs`,
          join(folder.dir, `slot-${slot}.json`),
          [`tests/demo-${i}.spec.ts`],
          1,
        );
        floor.peak = Number.isNaN(floor.peak) ? peak : Math.max(floor.peak, peak);
      } finally {
        free.push(slot);
      }
    };
    await oneSpec(0); // warm-up, outside the figure
    floor.perSpec = (specs / (await timed(specs, concurrency, oneSpec))) * 60_000;
    const began = performance.now();
    await playwrightTest(folder.dir, "one.config.mjs", join(folder.dir, "one.json"), [], specs);
    floor.oneRunner = (specs / (performance.now() - began)) * 60_000;
  } finally {
    await rm(folder.dir, { recursive: true, force: true });
  }

  const percent = (value: number) => `${((value / floor.perSpec) * 100).toFixed(0)}%`;
  const mib = (value: number) => value.toFixed(0);
  const rows = [
    `| floor: \`playwright test\` a spec | ${floor.perSpec.toFixed(1)} | | ${mib(floor.peak)} peak (the runner and its Chromium) | |`,
    `| floor: \`playwright test\` of all ${specs} at once | ${floor.oneRunner.toFixed(1)} | ${percent(floor.oneRunner)} | | |`,
  ];
  for (const mode of ["sandboxed", "unsandboxed"]) {
    const executor = await startServiceProcess(
      "executor",
      { ...system.executorEnv, PORT: "0", CONCURRENCY: String(concurrency), PLAYWRIGHT_SPECS: mode },
      { keepOutput: false, launch: { file: process.execPath, args: [launcher, "executor"], cwd: repoRoot } },
    );
    try {
      await runOf([warmup]); // warm-up: the runner's files in the page cache, outside the figure
      const idle = rssMiB(executor.process.pid);
      const began = performance.now();
      const memory = await sampled(executor.process.pid, () => runOf(measured));
      const perMinute = (specs / (performance.now() - began)) * 60_000;
      rows.push(
        `| executor, PLAYWRIGHT_SPECS=${mode} | ${perMinute.toFixed(1)} | ${percent(perMinute)} | ${mib(memory.peak)} / ${mib(memory.median)} | ${mib(idle)} / ${mib(memory.nodePeak)} |`,
      );
    } finally {
      await executor.stop();
    }
  }
  console.log(
    `\nPlaywright specs (a spec of ${testsPerSpec} tests against the demo target, ${specs} a measurement, ` +
      `${concurrency} at a time; target: the executor at 70% of the floor's specs a minute):\n\n` +
      "| who runs them | specs/min | of the floor | tree RSS peak / median (MiB) | executor's Node RSS idle / peak (MiB) |\n" +
      "| --- | --- | --- | --- | --- |",
  );
  for (const row of rows) console.log(row);
  console.log(`\nLoad average before the specs table: ${loadBefore}; after: ${loadAverage()}.`);
}
