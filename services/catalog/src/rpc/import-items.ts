import { ItemOutcome } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Violations } from "../errors.js";
import { type Sql, textArray } from "../sql.js";

// What every kind of item of a content document goes through in ImportContent (import-content.ts:
// test cases and plans; import-settings.ts: environments and variables): checked, matched to one
// of the project's, then given its outcome.

/** An item of the request, checked, and what became of it. */
export interface Item<Fields> {
  /** Its path in the request (`test_cases[3]`) and in the document (`testCases[3]`). */
  field: string;
  path: string;
  /** The id it is matched by; unset for one matched by name (in a file of another project, all). */
  id: string | undefined;
  fields: Fields;
  /** The project's item it is, once matched; its id. */
  match?: string;
  outcome: ItemOutcome;
  changed: string[];
}

export function item<Fields>(
  field: string,
  path: string,
  id: string | undefined,
  fields: Fields,
): Item<Fields> {
  return { field, path, id, fields, outcome: ItemOutcome.UNSPECIFIED, changed: [] };
}

/** Project rows read with the lower-case form of their name (PostgreSQL's, as ResolveRunSelection compares). */
export type Keyed<T> = T & { name_key: string };

/**
 * Whether a violation was added under an item's path. When more were added than are listed, any
 * item may have one: each is taken to have a problem.
 */
export const hasProblem = (violations: Violations, field: string) =>
  violations.truncated ||
  violations.list.some(
    (v) => v.field === field || v.field.startsWith(`${field}.`) || v.field.startsWith(`${field}[`),
  );

/** The lower-case forms of `texts`, as PostgreSQL's lower() makes them (the catalog's one rule for names). */
export async function lowerKeys(sql: Sql, texts: readonly string[]): Promise<string[]> {
  if (texts.length === 0) return [];
  const rows = await sql.all<{ key: string }>(
    "select lower(x) as key from unnest(?::text[]) with ordinality as u(x, n) order by n",
    [textArray(texts)],
  );
  return rows.map((row) => row.key);
}

/** The item's outcome: unknown with a problem, CREATED without a match, else CHANGED or UNCHANGED. */
export function decide(entry: Item<unknown>, violations: Violations, changed: string[] | undefined): void {
  if (hasProblem(violations, entry.field)) return;
  entry.changed = changed ?? [];
  entry.outcome =
    changed === undefined
      ? ItemOutcome.CREATED
      : changed.length > 0
        ? ItemOutcome.CHANGED
        : ItemOutcome.UNCHANGED;
}
