// What redacting a Playwright trace costs the executor (services/executor/src/browser/
// trace-redaction.ts): time, sizes, and the longest the event loop stood still meanwhile (the
// executor's other tests and heartbeats run in that loop). Prints figures, asserts none.
//
// Run: node --conditions=source --import tsx scripts/bench/trace-redaction.ts
// (CHROMIUM_PATH as for the executor; default /usr/bin/chromium).
//
// The trace is recorded by Chromium: 10 rounds of a 4-step test typing a value into a page that
// echoes it (40 actions). Larger traces are that one's entries repeated under other names (their
// events appended), 20 and 80 times: the same kinds of entries in the proportions of a real one.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unzipSync, zipSync } from "fflate";
import { chromium } from "playwright-core";
import { redactTrace } from "../../services/executor/src/browser/trace-redaction.js";
import { Variables } from "../../services/executor/src/steps/variables.js";
import { startBrowserTarget } from "../../services/executor/test/browser-target.js";

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`;

async function recordTrace(path: string): Promise<void> {
  const target = await startBrowserTarget();
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox"],
  });
  try {
    const context = await browser.newContext();
    await context.tracing.start({ screenshots: true, snapshots: true });
    const page = await context.newPage();
    for (let round = 0; round < 10; round++) {
      await page.goto(`${target.url}/echo-form`);
      await page.getByLabel("Value").fill(`hunter2-SECRET-${round}`);
      await page.getByRole("button", { name: "Send" }).click();
      await page.getByText("Sent back").waitFor();
    }
    await context.tracing.stop({ path });
  } finally {
    await browser.close();
    await target.close();
  }
}

/** The trace's entries `times` over, renamed apart; its two event logs appended to themselves. */
function repeated(zip: Uint8Array, times: number): Uint8Array {
  const entries = unzipSync(zip);
  const out: Record<string, Uint8Array> = {};
  for (let i = 0; i < times; i++) {
    for (const [name, bytes] of Object.entries(entries)) {
      if (name === "trace.trace" || name === "trace.network")
        out[name] = Buffer.concat([out[name] ?? new Uint8Array(), bytes]);
      else out[name.replace(/(\.[A-Za-z0-9]+)?$/, `-${i}$1`)] = bytes;
    }
  }
  return zipSync(out);
}

async function measure(label: string, zip: Uint8Array, vars: Variables): Promise<void> {
  const unzipped = Object.values(unzipSync(zip)).reduce((sum, bytes) => sum + bytes.byteLength, 0);
  let longestStall = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    longestStall = Math.max(longestStall, now - last);
    last = now;
  }, 2);
  const started = performance.now();
  const redacted = await redactTrace(zip, vars, { maxZipBytes: 256 << 20, maxUnzippedBytes: 1024 << 20 });
  const ms = performance.now() - started;
  clearInterval(ticker);
  console.log(
    `${label.padEnd(14)} zipped ${mib(zip.byteLength)}, unzipped ${mib(unzipped)} -> ${mib(redacted.byteLength)}` +
      ` in ${ms.toFixed(0)} ms (${(unzipped / 1024 / 1024 / (ms / 1000)).toFixed(1)} MiB/s unzipped);` +
      ` longest event-loop stall ${longestStall.toFixed(0)} ms`,
  );
}

const dir = mkdtempSync(join(tmpdir(), "testrun-trace-bench-"));
try {
  const path = join(dir, "trace.zip");
  await recordTrace(path);
  const zip = readFileSync(path);
  // Five values, as a project's variables and saved values would be.
  const vars = new Variables({
    A: "hunter2-SECRET-1",
    B: "another-value-xyz",
    C: "third-secret-value",
    D: "p@ss/wörd",
    E: "tok-123456",
  });
  await measure("40 actions", zip, vars); // warms up
  await measure("40 actions", zip, vars);
  await measure("x20", repeated(zip, 20), vars);
  await measure("x80", repeated(zip, 80), vars);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
