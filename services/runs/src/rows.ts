import type { DbTimestamp } from "@testrun/kit";
import type { ChargeState, RunStatus, SkipReason, TestStepSnapshot } from "./db/entities.js";

// Raw queries return timestamptz as text (DbTimestamp) and bigint-ish counts as text; these types
// describe rows as selected by the modules of store/ (counts are cast to int there).

export interface RunRow {
  id: string;
  project_id: string;
  environment_id: string;
  environment_base_url: string;
  test_plan_id: string | null;
  name: string;
  status: RunStatus;
  skip_reason: SkipReason | null;
  total_tests: number;
  passed_tests: number;
  failed_tests: number;
  skipped_tests: number;
  credits_charged: number;
  charge_state: ChargeState;
  refund_due: number;
  refund_reason: string | null;
  refunded_at: DbTimestamp | null;
  started_at: DbTimestamp | null;
  finished_at: DbTimestamp | null;
  created_at: DbTimestamp;
  started_by_key_id: string | null;
  started_by_member_id: string | null;
  /** bigint: text from a query's row, a number inside json_agg (read it with Number). */
  version: string | number;
}

export interface TestRow {
  id: string;
  run_id: string;
  test_case_id: string;
  test_case_version: number;
  name: string;
  position: number;
  status: RunStatus;
  steps: TestStepSnapshot[];
  summary: string | null;
  duration_ms: number | null;
  failed_step: number | null;
  attempt: number;
  lapsed_leases: number;
  lease_owner: string | null;
  lease_token: string | null;
  lease_expires_at: DbTimestamp | null;
  started_at: DbTimestamp | null;
  finished_at: DbTimestamp | null;
  queued_at: DbTimestamp;
  published_at: DbTimestamp | null;
  publish_count: number;
  refundable: boolean;
  skip_reason: SkipReason | null;
  /** Its run's version at its last visible change; text or number as `RunRow.version`. */
  version: string | number;
}

/** A run with its tests, as read in one statement or one transaction. */
export interface RunWithTests {
  run: RunRow;
  tests: TestRow[];
}

export const runColumns =
  "r.id, r.project_id, r.environment_id, r.environment_base_url, r.test_plan_id, r.name, r.status, r.skip_reason, r.total_tests, r.passed_tests, r.failed_tests, r.skipped_tests, r.credits_charged, r.charge_state, r.refund_due, r.refund_reason, r.refunded_at, r.started_at, r.finished_at, r.created_at, r.started_by_key_id, r.started_by_member_id, r.version";

export const testColumns =
  "t.id, t.run_id, t.test_case_id, t.test_case_version, t.name, t.position, t.status, t.steps, t.summary, t.duration_ms, t.failed_step, t.attempt, t.lapsed_leases, t.lease_owner, t.lease_token, t.lease_expires_at, t.started_at, t.finished_at, t.queued_at, t.published_at, t.publish_count, t.refundable, t.skip_reason, t.version";

export const isFinal = (status: RunStatus): boolean =>
  status === "passed" || status === "failed" || status === "skipped";
