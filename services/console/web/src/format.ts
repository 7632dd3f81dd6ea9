// Dates, roles and key states in words.
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { KeyState } from "@testrun/gen/testrun/keys/v1/keys_pb";

const absolute = new Intl.DateTimeFormat("en", { dateStyle: "medium", timeStyle: "short" });
const relative = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
const units: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 86_400_000],
  ["month", 30 * 86_400_000],
  ["day", 86_400_000],
  ["hour", 3_600_000],
  ["minute", 60_000],
];

export const dateOf = (stamp: Timestamp | undefined) => (stamp ? timestampDate(stamp) : undefined);
export const absoluteTime = (date: Date) => absolute.format(date);

/** "3 days ago", "in 2 months", "just now". */
export function relativeTime(date: Date, now = Date.now()): string {
  const delta = date.getTime() - now;
  for (const [unit, ms] of units) {
    if (Math.abs(delta) >= ms) return relative.format(Math.round(delta / ms), unit);
  }
  return "just now";
}

export const roleName: Record<Role, string> = {
  [Role.UNSPECIFIED]: "—",
  [Role.VIEWER]: "Viewer",
  [Role.EDITOR]: "Editor",
  [Role.ADMIN]: "Admin",
  [Role.OWNER]: "Owner",
};

export const keyStateName: Record<KeyState, string> = {
  [KeyState.UNSPECIFIED]: "Unknown",
  [KeyState.ACTIVE]: "Active",
  [KeyState.EXPIRED]: "Expired",
  [KeyState.REVOKED]: "Revoked",
  [KeyState.CREATOR_LOST_RIGHTS]: "Creator lost rights",
};

export const canEdit = (role: Role) => role >= Role.EDITOR;
export const canAdminister = (role: Role) => role >= Role.ADMIN;
