// The folder a Playwright spec runs in: its files laid out by their paths, a configuration written
// by the executor (never one from the spec's author), and @playwright/test reachable from it. The
// runner and the spec see nothing else of the executor's files (docs/security.md, "User code").
import { constants } from "node:fs";
import { mkdir, mkdtemp, open, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import type { PlaywrightSpec } from "@testrun/gen/testrun/catalog/v1/playwright_pb";

/** Where @playwright/test is installed beside the executor (its package folder). */
export const playwrightTestDir = dirname(
  createRequire(import.meta.url).resolve("@playwright/test/package.json"),
);
/**
 * The node_modules folder holding it, `playwright` and `playwright-core`: what a sandboxed runner
 * reads of the executor's files (besides its node and chromium).
 */
export const playwrightPackages = (() => {
  let dir = playwrightTestDir;
  while (basename(dir) !== "node_modules" && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
})();
/** Its command line, run with the executor's node. */
export const playwrightCli = join(playwrightTestDir, "cli.js");

export interface WorkspaceOptions {
  /** The environment's base URL: Playwright's `baseURL`. */
  baseUrl: string;
  /** The test's deadline: the runner's per-test and global timeouts. */
  deadlineMs: number;
  chromiumPath: string;
  /** Chromium's own flags (browser/chromium-flags.ts). */
  chromiumArgs: readonly string[];
  /** The executor's egress proxy, which every connection of the browser goes through. */
  proxyUrl?: string;
  /**
   * The same with its credentials and bypass rule (Playwright's `proxy`; chromium-flags.ts), in
   * place of proxyUrl. The spec could read them from the configuration: they only let it through
   * the same egress guard its browser already goes through.
   */
  proxy?: { server: string; username?: string; password?: string; bypass?: string };
  /** Keep the trace of passed tests too (TestAssignment.record_trace); failed ones always. */
  recordTrace: boolean;
  /** Where to make the folder (default: the system's temporary folder). */
  parent?: string;
}

export interface SpecWorkspace {
  dir: string;
  configPath: string;
  /** Where the JSON reporter writes. */
  reportPath: string;
  /** Where the runner writes traces and other attachments. */
  outputDir: string;
  dispose(): Promise<void>;
}

/** A relative path inside `root`, or an error: the catalog checks paths, and so does this. */
function inside(root: string, path: string): string {
  const target = resolve(root, path);
  const rel = relative(root, target);
  if (path.includes("\0") || rel === "" || rel.startsWith(`..${sep}`) || rel === ".." || resolve(rel) === rel)
    throw new Error(`the spec's file path ${JSON.stringify(path)} leaves its folder`);
  return target;
}

/**
 * Lays `spec` out in a fresh folder. The configuration: one worker, no retries of its own (the
 * runs service decides retries), the deadline as timeout, the JSON reporter, traces without
 * screenshots or screencast (a picture cannot be redacted after the fact: docs/security.md), and
 * no screenshots or videos.
 */
export async function layOutSpec(spec: PlaywrightSpec, options: WorkspaceOptions): Promise<SpecWorkspace> {
  if (!spec.spec) throw new Error("the Playwright spec has no spec file");
  const dir = await mkdtemp(join(options.parent ?? tmpdir(), "testrun-spec-"));
  const dispose = () => rm(dir, { recursive: true, force: true });
  try {
    const files = join(dir, "files");
    for (const file of [spec.spec, ...spec.files]) {
      const target = inside(files, file.path);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, file.source, { flag: "wx" });
    }
    // `import { test } from "@playwright/test"` resolves upwards from the spec's folder.
    await mkdir(join(dir, "node_modules", "@playwright"), { recursive: true });
    await symlink(playwrightTestDir, join(dir, "node_modules", "@playwright", "test"), "dir");

    const reportPath = join(dir, "report.json");
    const outputDir = join(dir, "results");
    const config = {
      testDir: files,
      testMatch: [spec.spec.path],
      workers: 1,
      retries: 0,
      fullyParallel: false,
      timeout: options.deadlineMs,
      globalTimeout: options.deadlineMs,
      forbidOnly: false,
      outputDir,
      reporter: [["json", { outputFile: reportPath }]],
      use: {
        baseURL: options.baseUrl,
        trace: {
          mode: options.recordTrace ? "on" : "retain-on-failure",
          screenshots: false,
          snapshots: true,
          sources: true,
        },
        screenshot: "off",
        video: "off",
        launchOptions: { executablePath: options.chromiumPath, args: [...options.chromiumArgs] },
        ...(options.proxy
          ? { proxy: options.proxy }
          : options.proxyUrl
            ? { proxy: { server: options.proxyUrl } }
            : {}),
      },
    };
    const configPath = join(dir, "playwright.config.mjs");
    await writeFile(configPath, `export default ${JSON.stringify(config, null, 2)};\n`);
    return { dir, configPath, reportPath, outputDir, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}

export class UnreadableOutput extends Error {
  override name = "UnreadableOutput";
}

/** An output file past the size read: the spec's own doing (what its tests printed is in the report). */
export class OutputTooLarge extends UnreadableOutput {
  override name = "OutputTooLarge";
}

/**
 * Reads a file the runner wrote in the workspace (its report, a trace). The runner's process ran the
 * spec, so the file may be anything: only a regular file inside the workspace is read (never what a
 * symbolic link points at, which could be a file of the executor's), at most `maxBytes` of it.
 */
export async function readOutput(workspace: SpecWorkspace, path: string, maxBytes: number): Promise<Buffer> {
  const root = await realpath(workspace.dir);
  const real = await realpath(path).catch(() => undefined);
  if (real === undefined || !real.startsWith(`${root}${sep}`))
    throw new UnreadableOutput(`${relative(workspace.dir, path)} is not a file of the spec's folder`);
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new UnreadableOutput(`${relative(workspace.dir, path)} is not a regular file`);
    if (stat.size > maxBytes)
      throw new OutputTooLarge(`${relative(workspace.dir, path)} is larger than ${maxBytes} bytes`);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}
