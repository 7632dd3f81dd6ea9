// Reading a folder of Playwright specs from disk, the one way both `testrun push <folder>` and
// `testrunctl content import --specs <folder>` do it: which folders and files are left out, and
// which are specs or helpers (playwright.ts). Node-only (node:fs), so it is its own export path
// (@testrun/content-file/spec-folder) and never reaches the console's browser bundle.
import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { helperFilePattern, type PlaywrightFileInput, specFilePattern } from "./playwright.js";

/** Folders never holding the project's own specs: dependencies and tools' output. */
const skipped = new Set(["node_modules", "test-results", "playwright-report", "blob-report"]);

/** Files that configure a project rather than being imported by a spec. */
const configFile = /(^|\/)(playwright\.config\.[cm]?[jt]s|package(-lock)?\.json|tsconfig[^/]*\.json)$/;

/** Why a folder could not be read; each CLI words it in its own voice. */
export class SpecFolderError extends Error {
  constructor(
    /** `unreadable`: not a folder, or not there; `too-large`: past `maxBytes`. */
    readonly reason: "unreadable" | "too-large",
    message: string,
  ) {
    super(message);
    this.name = "SpecFolderError";
  }
}

export interface SpecFolderOptions {
  /** The most bytes of sources to read; past it the read stops with a `too-large` error. */
  maxBytes?: number;
}

/**
 * The spec and helper files under `folder` (hidden folders, `skipped` and config files left out),
 * in path order, with paths relative to the folder and "/" between its parts.
 */
export async function specFolderFiles(
  folder: string,
  options: SpecFolderOptions = {},
): Promise<PlaywrightFileInput[]> {
  let entries: string[];
  try {
    if (!(await stat(folder)).isDirectory()) throw new Error("not a folder");
    entries = await readdir(folder, { recursive: true });
  } catch (error) {
    throw new SpecFolderError("unreadable", (error as Error).message);
  }
  const files: PlaywrightFileInput[] = [];
  let bytes = 0;
  for (const entry of entries.sort()) {
    const path = relative(folder, join(folder, entry)).split(sep).join("/");
    if (path.split("/").some((part) => part.startsWith(".") || skipped.has(part))) continue;
    if (configFile.test(path) || !(specFilePattern.test(path) || helperFilePattern.test(path))) continue;
    const file = join(folder, entry);
    // A folder whose name ends like a file (pages.ts/): nothing to read.
    if (!(await stat(file)).isFile()) continue;
    const source = await readFile(file, "utf8");
    bytes += Buffer.byteLength(source);
    // Checked as it reads, so a folder of generated megabytes is refused before it fills memory.
    if (options.maxBytes !== undefined && bytes > options.maxBytes)
      throw new SpecFolderError("too-large", `more than ${options.maxBytes} bytes of sources`);
    files.push({ path, source });
  }
  return files;
}
