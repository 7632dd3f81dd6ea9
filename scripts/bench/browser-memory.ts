// The memory a browser needs beside an executor, for sizing executor pods (helm/testrun values,
// docs/scaling.md "Browser executors"): one chromium driven by playwright-core, as executors drive
// it, running the demo's sign-in test (goto, fill, fill, click, expect, screenshot) in a fresh
// context per test on N (1, 2, 4) contexts at once against the demo target. Prints, per N, the
// chromium processes' proportional set size (PSS: shared pages counted once across them, which is
// what a pod's memory cgroup is charged) at its peak and median, their summed RSS, the Node
// driver's RSS, /tmp used by the browser's profile, and tests a minute. Asserts nothing.
//   node --conditions=source --import tsx scripts/bench/browser-memory.ts [seconds per N, default 20]
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { createDemoTarget } from "../../services/executor/src/demo-target/server.js";

const seconds = Number(process.argv[2] ?? 20);
const levels = [1, 2, 4];
const mib = (kib: number) => Math.round(kib / 1024);

/** The process and its descendants, from /proc. */
function tree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const visit = (pid: number) => {
    found.push(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(root);
  return found;
}

/** Summed Pss and Rss (KiB) of some processes (smaps_rollup). */
function memoryOf(pids: number[]): { pss: number; rss: number } {
  let pss = 0;
  let rss = 0;
  for (const pid of pids) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
      pss += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
      rss += Number(/^Rss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
    } catch {
      // gone meanwhile
    }
  }
  return { pss, rss };
}

/** Bytes under a folder. */
function sizeOf(folder: string): number {
  let total = 0;
  for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    try {
      total += statSync(join(entry.parentPath, entry.name)).size;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

const target = createDemoTarget({ user: "demo", password: "demo-password" });
target.listen(0, "127.0.0.1");
await once(target, "listening");
const address = target.address();
const baseUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;

// The browser's temporary files (its profile) in a folder of their own, to be measured.
const scratch = mkdtempSync(join(tmpdir(), "browser-memory-"));
process.env.TMPDIR = scratch;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-gpu"],
});
/** Chromium's processes: everything this process started (it starts nothing else). */
const browserProcesses = () => tree(process.pid).filter((pid) => pid !== process.pid);
const idle = memoryOf(browserProcesses());

/** The demo's sign-in test, in a fresh context. */
async function signInTest(): Promise<void> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${baseUrl}/login`);
    await page.getByLabel("Email").fill("demo@demo.example");
    await page.getByLabel("Password").fill("demo-password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("greeting").waitFor();
    await page.screenshot();
  } finally {
    await context.close();
  }
}

const rows: string[] = [];
for (const contexts of levels) {
  let tests = 0;
  const samples: number[] = [];
  let peak = { pss: 0, rss: 0 };
  let tmpPeak = 0;
  const until = Date.now() + seconds * 1000;
  const sampler = setInterval(() => {
    const now = memoryOf(browserProcesses());
    samples.push(now.pss);
    if (now.pss > peak.pss) peak = now;
    tmpPeak = Math.max(tmpPeak, sizeOf(scratch));
  }, 100);
  await Promise.all(
    Array.from({ length: contexts }, async () => {
      while (Date.now() < until) {
        await signInTest();
        tests++;
      }
    }),
  );
  clearInterval(sampler);
  const driver = Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0);
  rows.push(
    `| ${contexts} | ${mib(peak.pss)} | ${mib(median(samples))} | ${mib(peak.rss)} | ${mib(driver)} | ${Math.round(tmpPeak / 2 ** 20)} | ${Math.round((tests * 60) / seconds)} |`,
  );
}
await browser.close();
target.close();
rmSync(scratch, { recursive: true, force: true });

process.stdout.write(
  [
    `chromium ${browser.version()} idle (no context): PSS ${mib(idle.pss)} MiB, RSS ${mib(idle.rss)} MiB`,
    "",
    "| contexts | chromium PSS peak MiB | chromium PSS median MiB | chromium RSS sum at peak MiB | Node driver RSS MiB | /tmp MiB | tests/min |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
  ].join("\n"),
);
