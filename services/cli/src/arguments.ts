// Parsing and checking of command-line values, before any service is called (UsageError, exit 2).
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { KeyExpiry } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { UsageError } from "./errors.js";

const roles: Record<string, Role> = {
  owner: Role.OWNER,
  admin: Role.ADMIN,
  editor: Role.EDITOR,
  viewer: Role.VIEWER,
};

/** owner, admin, editor or viewer (any letter case). */
export function parseRole(value: string): Role {
  const role = roles[value.trim().toLowerCase()];
  if (role === undefined) throw new UsageError(`role must be one of ${Object.keys(roles).join(", ")}`);
  return role;
}

/** A Role's name as operators type it: ROLE_EDITOR -> "editor". */
export function roleName(role: Role): string {
  return Object.entries(roles).find(([, value]) => value === role)?.[0] ?? "unspecified";
}

/** The expiry choices of docs/keys.md. */
export const expiries: Record<string, KeyExpiry> = {
  "30d": KeyExpiry.DAYS_30,
  "90d": KeyExpiry.DAYS_90,
  "1y": KeyExpiry.YEAR_1,
  never: KeyExpiry.NEVER,
};

/** 30d, 90d, 1y or never. */
export function parseExpiry(value: string): KeyExpiry {
  const expiry = expiries[value.trim().toLowerCase()];
  if (expiry === undefined) throw new UsageError(`expiry must be one of ${Object.keys(expiries).join(", ")}`);
  return expiry;
}

/** A whole number between min and max, written in decimal digits only (no 1e3, no 0x10, no 12abc). */
export function parseWholeNumber(value: string, what: string, min: number, max: number): number {
  const number = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < min || number > max) {
    throw new UsageError(`${what} must be a whole number from ${min} to ${max}`);
  }
  return number;
}

/** An identifier of the expected kind (`prj_…`, `org_…`): catches a name or a swapped id early. */
export function parseId(value: string, prefix: string, what: string): string {
  const id = value.trim();
  if (!id.startsWith(`${prefix}_`) || id.length <= prefix.length + 1) {
    throw new UsageError(`${what} must be an id starting with ${prefix}_`);
  }
  return id;
}

/** Non-empty after trimming (the services trim names too). */
export function parseText(value: string, what: string): string {
  if (value.trim() === "") throw new UsageError(`${what} must not be empty`);
  return value;
}

/**
 * The value of a variable as given on stdin or in --value: one trailing line break is dropped
 * (`echo secret |` adds one); anything else is kept as is. Never part of an error message.
 */
export function variableValue(raw: string): string {
  const value = raw.replace(/\r?\n$/, "");
  if (value === "") throw new UsageError("the variable's value is empty");
  return value;
}
