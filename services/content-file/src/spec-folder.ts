// Reading a folder of Playwright specs from disk, the one way both `testrun push <folder>` and
// `testrunctl content import --specs <folder>` do it: which folders and files are left out, and
// which are specs or helpers (playwright.ts). Node-only (node:fs), so it is its own export path
// (@testrun/content-file/spec-folder) and never reaches the console's browser bundle.
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
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
 * The files under `folder`, relative paths with "/" between parts, hidden and `skipped` folders
 * left out. Symbolic links are never followed, to files or folders: a link could bring in a file
 * from outside the folder (a credentials file, the whole disk through a link to `..`).
 */
async function filesUnder(folder: string, under = ""): Promise<string[]> {
  const found: string[] = [];
  const entries = await readdir(join(folder, under), { withFileTypes: true });
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (entry.isSymbolicLink() || entry.name.startsWith(".") || skipped.has(entry.name)) continue;
    const path = under === "" ? entry.name : `${under}/${entry.name}`;
    if (entry.isDirectory()) found.push(...(await filesUnder(folder, path)));
    else if (entry.isFile()) found.push(path);
  }
  return found;
}

/**
 * The spec and helper files under `folder` (hidden folders, `skipped`, config files and symbolic
 * links left out), in path order, with paths relative to the folder and "/" between its parts.
 */
export async function specFolderFiles(
  folder: string,
  options: SpecFolderOptions = {},
): Promise<PlaywrightFileInput[]> {
  let paths: string[];
  try {
    if (!(await stat(folder)).isDirectory()) throw new Error("not a folder");
    paths = await filesUnder(folder);
  } catch (error) {
    throw new SpecFolderError("unreadable", (error as Error).message);
  }
  const files: PlaywrightFileInput[] = [];
  let bytes = 0;
  for (const path of paths.sort()) {
    if (configFile.test(path) || !(specFilePattern.test(path) || helperFilePattern.test(path))) continue;
    const source = await readFile(join(folder, ...path.split("/")), "utf8");
    bytes += Buffer.byteLength(source);
    // Checked as it reads, so a folder of generated megabytes is refused before it fills memory.
    if (options.maxBytes !== undefined && bytes > options.maxBytes)
      throw new SpecFolderError("too-large", `more than ${options.maxBytes} bytes of sources`);
    files.push({ path, source });
  }
  return files;
}
