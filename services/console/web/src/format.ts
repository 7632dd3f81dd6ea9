// Dates, durations, roles, key, run and test states, and credits in words.
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { LedgerEntryKind } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { KeyState } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { RunStatus, SkipReason, type TestResult, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";

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

/** "420 ms", "3.2 s", "4 min 5 s", "1 h 2 min"; `missing` when unset. */
export function duration(ms: bigint | number | undefined, missing = "—"): string {
  if (ms === undefined) return missing;
  const n = Number(ms);
  if (n < 1000) return `${n} ms`;
  if (n < 60_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)} s`;
  const seconds = Math.round(n / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

const whole = new Intl.NumberFormat("en");
/** A count with thousands separators: "1,000". */
export const count = (n: bigint | number) => whole.format(n);
/** "1 test", "7 tests". */
export const plural = (n: bigint | number, one: string, many = `${one}s`) =>
  `${count(n)} ${n === 1 || n === 1n ? one : many}`;
/** A service's description as a sentence: "must be an absolute URL" → "Must be an absolute URL." */
export const sentence = (text: string) => {
  const capital = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?)]$/.test(capital) ? capital : `${capital}.`;
};
/** A signed change: "+5", "−3" (a real minus sign), "0". */
export const signed = (n: bigint) => (n > 0n ? `+${count(n)}` : n < 0n ? `−${count(-n)}` : "0");

/** The tone of a status badge (styles.css badge-*). */
export type Tone = "good" | "bad" | "neutral" | "active" | "waiting";

export const runStatusName: Record<RunStatus, string> = {
  [RunStatus.UNSPECIFIED]: "Unknown",
  [RunStatus.QUEUED]: "Queued",
  [RunStatus.RUNNING]: "Running",
  [RunStatus.PASSED]: "Passed",
  [RunStatus.FAILED]: "Failed",
  [RunStatus.SKIPPED]: "Skipped",
};
export const runStatusTone: Record<RunStatus, Tone> = {
  [RunStatus.UNSPECIFIED]: "neutral",
  [RunStatus.QUEUED]: "waiting",
  [RunStatus.RUNNING]: "active",
  [RunStatus.PASSED]: "good",
  [RunStatus.FAILED]: "bad",
  [RunStatus.SKIPPED]: "neutral",
};
/** The statuses a run list can be filtered by, with their names in the URL (?status=failed). */
export const runStatusFilters = [
  RunStatus.RUNNING,
  RunStatus.PASSED,
  RunStatus.FAILED,
  RunStatus.SKIPPED,
].map((status) => ({ status, param: runStatusName[status].toLowerCase() }));

export const testStatusName: Record<TestStatus, string> = {
  [TestStatus.UNSPECIFIED]: "Unknown",
  [TestStatus.QUEUED]: "Queued",
  [TestStatus.RUNNING]: "Running",
  [TestStatus.PASSED]: "Passed",
  [TestStatus.FAILED]: "Failed",
  [TestStatus.SKIPPED]: "Skipped",
};
export const testStatusTone: Record<TestStatus, Tone> = {
  [TestStatus.UNSPECIFIED]: "neutral",
  [TestStatus.QUEUED]: "waiting",
  [TestStatus.RUNNING]: "active",
  [TestStatus.PASSED]: "good",
  [TestStatus.FAILED]: "bad",
  [TestStatus.SKIPPED]: "neutral",
};

/** Why a run was skipped, as a sentence. */
export const skipReasonText: Record<SkipReason, string> = {
  [SkipReason.UNSPECIFIED]: "",
  [SkipReason.ENVIRONMENT_UNREACHABLE]:
    "Skipped: the environment was unreachable (its base URL did not answer when checked before the tests ran). Its credits were refunded.",
  [SkipReason.CANCELLED]:
    "Skipped: the run was cancelled before any test passed or failed. The credits of the tests not yet started were refunded.",
  [SkipReason.NO_EXECUTOR]:
    "Skipped: no executor took the tests in time (each test's summary says why, when it is known). The credits of the tests that never started were refunded.",
};

/**
 * What a QUEUED test waits for, as a sentence: an executor, or, when the runs service knows that
 * none here can run it (TestResult.waiting_for), one that can, and why none does. Empty otherwise.
 */
export function waitingText(test: Pick<TestResult, "status" | "waitingFor">): string {
  if (test.status !== TestStatus.QUEUED) return "";
  return test.waitingFor ? `Waiting for ${test.waitingFor}` : "Waiting for an executor";
}

/** Why a run was skipped, in a few words for a list (skipReasonText says it in full). */
export const skipReasonShort: Record<SkipReason, string> = {
  [SkipReason.UNSPECIFIED]: "",
  [SkipReason.ENVIRONMENT_UNREACHABLE]: "environment unreachable",
  [SkipReason.CANCELLED]: "cancelled",
  [SkipReason.NO_EXECUTOR]: "no executor took it",
};

export const ledgerKindName: Record<LedgerEntryKind, string> = {
  [LedgerEntryKind.UNSPECIFIED]: "Unknown",
  [LedgerEntryKind.GRANT]: "Grant",
  [LedgerEntryKind.CHARGE]: "Charge",
  [LedgerEntryKind.REFUND]: "Refund",
};
