// The bounds and rules of a Playwright spec case (proto/testrun/catalog/v1/playwright.proto), in
// one place: the catalog refuses a spec past them on write, `testrunctl content import` and
// `testrun push` check a folder against them before sending it, and the console's editor states
// them, so none of them can disagree on a number.

/** A spec or helper file: where it sits, and its text. */
export interface PlaywrightFileInput {
  path: string;
  source: string;
}

/** A spec case's files, as PlaywrightSpec carries them. */
export interface PlaywrightInput {
  spec?: PlaywrightFileInput | undefined;
  files: readonly PlaywrightFileInput[];
}

export const playwrightBounds = {
  /** The spec's source, in bytes of UTF-8 (256 KiB). */
  specBytes: 256 * 1024,
  /** Each helper file's source, in bytes of UTF-8 (256 KiB). */
  fileBytes: 256 * 1024,
  /** Helper files beside the spec. */
  files: 20,
  /** Every source of the case together (1 MiB). */
  totalBytes: 1024 * 1024,
  /** A file's path, in characters. */
  pathCharacters: 255,
} as const;

/** What a spec file's name ends in: what @playwright/test's runner picks up by default. */
export const specFilePattern = /\.(spec|test)\.(ts|js)$/;
/** What a helper file's name ends in: modules the spec may import, and JSON data. */
export const helperFilePattern = /\.(ts|js|mjs|cjs|json)$/;

const kib = (bytes: number) => `${bytes / 1024} KiB`;
const mib = (bytes: number) => `${bytes / 1024 / 1024} MiB`;

/** The size of a source as stored and sent: bytes of UTF-8. */
export const sourceBytes = (source: string) => new TextEncoder().encode(source).length;

function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

/**
 * What is wrong with a file's path, or undefined. A path is relative and stays inside the spec's
 * folder: it is laid out on the executor's disk as given, so `..`, an absolute path or a drive
 * would write elsewhere.
 */
export function pathProblem(path: string, kind: "spec" | "helper"): string | undefined {
  if (path.length === 0) return "is required";
  if ([...path].length > playwrightBounds.pathCharacters)
    return `must be at most ${playwrightBounds.pathCharacters} characters`;
  if (hasControlCharacter(path)) return "must not contain control characters";
  if (path.includes("\\")) return 'must use "/" between folders, not "\\"';
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path))
    return "must be relative to the spec's folder (not start with / or a drive)";
  const parts = path.split("/");
  if (parts.includes("..")) return 'must not contain ".." (a file stays inside the spec\'s folder)';
  if (parts.some((part) => part === "" || part === "."))
    return 'must not have empty or "." parts (a/b.ts, not a//b.ts or ./b.ts)';
  if (kind === "spec" && !specFilePattern.test(path))
    return "must end in .spec.ts, .spec.js, .test.ts or .test.js";
  if (kind === "helper" && !helperFilePattern.test(path)) return "must end in .ts, .js, .mjs, .cjs or .json";
  return undefined;
}

/**
 * Checks a spec case's files against the rules of playwright.proto, calling `add` with the field
 * (under `field`, e.g. `playwright` or `test_cases[2].playwright`) and what is wrong for each
 * problem; every problem names the bound it passes.
 */
export function checkPlaywright(
  input: PlaywrightInput,
  field: string,
  add: (field: string, problem: string) => void,
): void {
  const { spec, files } = input;
  const seen = new Map<string, string>();
  const checkFile = (file: PlaywrightFileInput, at: string, kind: "spec" | "helper") => {
    const problem = pathProblem(file.path, kind);
    if (problem) add(`${at}.path`, problem);
    else {
      const key = file.path.toLowerCase();
      const earlier = seen.get(key);
      if (earlier !== undefined)
        add(`${at}.path`, `is the path of ${earlier} too: each file needs its own path`);
      else seen.set(key, at);
    }
    const max = kind === "spec" ? playwrightBounds.specBytes : playwrightBounds.fileBytes;
    const bytes = sourceBytes(file.source);
    if (kind === "spec" && file.source.trim() === "") add(`${at}.source`, "is required");
    else if (bytes > max) add(`${at}.source`, `must be at most ${kib(max)} (got ${bytes} bytes)`);
    if (file.source.includes("\u0000")) add(`${at}.source`, "must not contain NUL characters");
  };
  if (!spec) add(`${field}.spec`, "is required: the spec file, with its path and source");
  else checkFile(spec, `${field}.spec`, "spec");
  if (files.length > playwrightBounds.files)
    add(`${field}.files`, `must hold at most ${playwrightBounds.files} helper files (got ${files.length})`);
  files.slice(0, playwrightBounds.files).forEach((file, index) => {
    checkFile(file, `${field}.files[${index}]`, "helper");
  });
  const total = [spec, ...files].reduce((sum, file) => sum + (file ? sourceBytes(file.source) : 0), 0);
  if (total > playwrightBounds.totalBytes)
    add(
      field,
      `must hold at most ${mib(playwrightBounds.totalBytes)} of sources in all, spec and helper files together (got ${total} bytes)`,
    );
}

/** Relative module names a file imports: `from "./x"`, `import "./x"`, `import("./x")`, `require("./x")`. */
const importPattern = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["'](\.{1,2}\/[^"'\n]+)["']/g;

/** `a/b/../c/./d` as `a/c/d`; undefined when it climbs above the folder. */
function normalize(path: string): string | undefined {
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join("/");
}

/** The files a module name may be, in the order TypeScript and Node try them. */
function candidates(base: string): string[] {
  const stem = base.replace(/\.(js|mjs|cjs)$/, "");
  return [
    base,
    // TypeScript sources import each other by their .js name.
    ...(stem !== base ? [`${stem}.ts`, `${stem}.mts`, `${stem}.cts`] : []),
    ...["ts", "js", "mjs", "cjs", "json"].map((ext) => `${base}.${ext}`),
    `${base}/index.ts`,
    `${base}/index.js`,
  ];
}

/**
 * The helper files of `files` that the spec at `specPath` imports, directly or through each other,
 * by relative module names (a bare name, like @playwright/test, is a package, not a file), in the
 * order first reached.
 */
export function helpersOf(specPath: string, files: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  const seen = new Set([specPath]);
  const queue = [specPath];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const source = files.get(next) ?? "";
    const folder = next.includes("/") ? next.slice(0, next.lastIndexOf("/")) : "";
    for (const match of source.matchAll(importPattern)) {
      const base = normalize(folder ? `${folder}/${match[1]}` : (match[1] ?? ""));
      if (base === undefined) continue;
      const file = candidates(base).find((candidate) => files.has(candidate));
      if (file === undefined || seen.has(file) || !helperFilePattern.test(file)) continue;
      seen.add(file);
      found.push(file);
      queue.push(file);
    }
  }
  return found;
}

/** A spec case of a folder, as a content document's test case (specCasesOfFolder). */
export interface SpecCaseInput {
  /** The spec's path. */
  name: string;
  tags: string[];
  recordTrace: boolean;
  retries: number;
  steps: [];
  playwright: PlaywrightInput;
  /** Where it sits in the document made of the folder: "testCases[1]". */
  path: string;
}

/**
 * A folder of Playwright specs as test cases: one per spec file (specFilePattern), named by its
 * path, with the helper files it imports (helpersOf). Paths are relative to the folder, with "/".
 * A content import matches each to the project's test case of the same spec path.
 */
export function specCasesOfFolder(files: readonly PlaywrightFileInput[]): SpecCaseInput[] {
  const byPath = new Map(files.map((file) => [file.path, file.source]));
  return files
    .filter((file) => specFilePattern.test(file.path))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((spec, index) => ({
      name: spec.path,
      tags: [],
      recordTrace: false,
      retries: 0,
      steps: [],
      playwright: {
        spec,
        files: helpersOf(spec.path, byPath).map((path) => ({ path, source: byPath.get(path) ?? "" })),
      },
      path: `testCases[${index}]`,
    }));
}
