/**
 * The JSON path subset of step.proto: `$` (the whole value), `.name`, `['name']` or `["name"]`, and
 * `[index]` (zero-based), e.g. `$.items[0].id`. No library implements exactly this subset without
 * also accepting filters and wildcards that a path of a test case must not use, so this is a small
 * evaluator of its own.
 */

import { own, type Said, say } from "./wording.js";

export type PathSegment = { key: string } | { index: number };

export class JsonPathError extends Error {
  override name = "JsonPathError";

  /** The message in pieces: the path is the test's text (redacted in a summary), the rest ours. */
  constructor(readonly said: Said) {
    super(said.toString());
  }
}

/** Parses a path into segments; throws JsonPathError naming what is wrong. */
export function parseJsonPath(path: string): PathSegment[] {
  if (!path.startsWith("$")) throw new JsonPathError(say`JSON path ${path} must start with $`);
  const segments: PathSegment[] = [];
  let i = 1;
  while (i < path.length) {
    const char = path[i];
    if (char === ".") {
      const match = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(path.slice(i + 1));
      if (!match) throw new JsonPathError(say`JSON path ${path}: expected a name after "." at ${own(i)}`);
      segments.push({ key: match[0] });
      i += 1 + match[0].length;
    } else if (char === "[") {
      const rest = path.slice(i);
      const index = /^\[(\d+)\]/.exec(rest);
      const quoted = /^\[(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\]/.exec(rest);
      if (index?.[1] !== undefined) {
        segments.push({ index: Number(index[1]) });
        i += index[0].length;
      } else if (quoted) {
        const raw = quoted[1] ?? quoted[2] ?? "";
        segments.push({ key: raw.replace(/\\(.)/g, "$1") });
        i += quoted[0].length;
      } else {
        throw new JsonPathError(say`JSON path ${path}: expected [index] or ['name'] at ${own(i)}`);
      }
    } else {
      throw new JsonPathError(say`JSON path ${path}: unexpected "${char ?? ""}" at ${own(i)}`);
    }
  }
  return segments;
}

/** The value at `path`, or `{ found: false }` when the path matches nothing. */
export function evaluateJsonPath(
  value: unknown,
  path: string,
): { found: true; value: unknown } | { found: false } {
  let current = value;
  for (const segment of parseJsonPath(path)) {
    if ("index" in segment) {
      if (!Array.isArray(current) || segment.index >= current.length) return { found: false };
      current = current[segment.index];
    } else {
      if (current === null || typeof current !== "object" || Array.isArray(current)) return { found: false };
      if (!Object.hasOwn(current, segment.key)) return { found: false };
      current = (current as Record<string, unknown>)[segment.key];
    }
  }
  return { found: true, value: current };
}
