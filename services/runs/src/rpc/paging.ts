// Paging of the health and failure-group reads: page sizes and the opaque offset cursors of lists
// ordered by computed keys (impact), where a (time, id) page end does not apply.
import { invalid } from "../errors.js";

/** A page size: 0 means `fallback`, 1 to `max` as given, anything else refused. */
export function pageSize(limit: number, fallback: number, max: number): number {
  if (limit === 0) return fallback;
  if (limit < 0 || limit > max) throw invalid(`limit must be 1 to ${max}`);
  return limit;
}

/** Offsets travel as opaque cursors (base64url of JSON). */
export const encodeOffset = (offset: number) =>
  Buffer.from(JSON.stringify({ o: offset })).toString("base64url");

/** The offset a cursor carries (0 for none); INVALID_ARGUMENT for one not made by encodeOffset. */
export function decodeOffset(cursor: string): number {
  if (!cursor) return 0;
  try {
    const { o } = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { o?: unknown };
    if (typeof o === "number" && Number.isInteger(o) && o >= 0 && o <= 1_000_000) return o;
  } catch {}
  throw invalid("cursor is not valid");
}
