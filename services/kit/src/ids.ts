import { monotonicFactory } from "ulid";

/** Type prefixes of every identifier the product hands out (docs/rest-api.md, "Identifiers and times"). */
export type IdPrefix =
  | "org"
  | "mem"
  | "prj"
  | "env"
  | "pln"
  | "tc"
  | "run"
  | "tr"
  | "key"
  | "var"
  | "led"
  | "art"
  | "sch"
  | "whk"
  | "dlv"
  | "bdg"
  | "qtn"
  | "fg";

// Monotonic: ids made in the same millisecond still sort in creation order.
const nextUlid = monotonicFactory();

/** A new opaque, time-sortable identifier such as `run_01jd3k…` (lower-case ULID). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid().toLowerCase()}`;
}

/** Whether a string has the shape of an id of the given kind; says nothing about existence. */
export function isIdOf(prefix: IdPrefix, value: string): boolean {
  return value.startsWith(`${prefix}_`) && /^[0-9a-hjkmnp-tv-z]{26}$/.test(value.slice(prefix.length + 1));
}
