// An HTTP step's texts as the form holds them, read and written: rows as maps (a repeated name is
// a problem at its row), JSON and status codes as typed, milliseconds.
import type { JsonValue } from "@bufbuild/protobuf";
import { httpStepBounds } from "@testrun/content-file";
import { addMessage, type FieldMessages, type Pair, rowField } from "./model.js";

export const pairsOf = (map: Record<string, string>): Pair[] =>
  Object.entries(map).map(([name, value]) => ({ name, value }));

/** A JSON value as the form shows it: on one line when short, else indented. */
export function jsonText(value: JsonValue, indent = true): string {
  const oneLine = JSON.stringify(value);
  return indent && oneLine.length > 60 ? JSON.stringify(value, null, 2) : oneLine;
}

export const msText = (ms: number) => (ms === 0 ? "" : String(ms));

/** Parses a JSON text; the parser's message (with its position) when it is not JSON. */
export function parseJson(text: string): { ok: true; value: JsonValue } | { ok: false; problem: string } {
  try {
    return { ok: true, value: JSON.parse(text) as JsonValue };
  } catch (error) {
    return { ok: false, problem: error instanceof Error ? error.message : String(error) };
  }
}

/** Status codes as typed ("200, 201" or "200 201"): the numbers, or what is not one. */
export function parseStatuses(text: string): { codes: number[]; bad?: string } {
  const parts = text.split(/[\s,]+/).filter((part) => part !== "");
  const bad = parts.find((part) => !/^\d{1,9}$/.test(part));
  return bad === undefined ? { codes: parts.map(Number) } : { codes: [], bad };
}

/** Milliseconds as typed: "" is 0. */
export function parseMs(text: string, field: string, problems: FieldMessages): number {
  const trimmed = text.trim();
  if (trimmed === "") return 0;
  if (!/^\d+$/.test(trimmed)) {
    addMessage(problems, field, "Must be a whole number of milliseconds, e.g. 5000.");
    return 0;
  }
  const ms = Number(trimmed);
  if (ms > 2_147_483_647) {
    addMessage(problems, field, `Must be at most ${httpStepBounds.ms}.`);
    return 0;
  }
  return ms;
}

/**
 * Rows as a map; two rows of one name (for headers, ignoring letter case as HTTP does) cannot
 * both be kept, so that is a problem at the second one rather than a silent loss.
 */
export function mapOf(
  rows: Pair[],
  field: string,
  problems: FieldMessages,
  what: string,
  ignoreCase = false,
): Record<string, string> {
  const map: Record<string, string> = {};
  const seen = new Map<string, number>();
  rows.forEach((row, index) => {
    const key = ignoreCase ? row.name.toLowerCase() : row.name;
    const first = seen.get(key);
    if (first !== undefined) {
      const name = row.name === "" ? "without a name" : `“${row.name}”`;
      addMessage(
        problems,
        rowField(field, index),
        `${what} ${first + 1} is ${name} too${ignoreCase ? " (names ignore letter case)" : ""}: rename or remove one.`,
      );
      return;
    }
    seen.set(key, index);
    map[row.name] = row.value;
  });
  return map;
}
