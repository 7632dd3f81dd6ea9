import type { DbTimestamp } from "@testrun/kit";
import type {
  ArtifactKind,
  ChargeState,
  FailureCause,
  HealthState,
  RecentResult,
  ResultRefRow,
  RunStatus,
  SkipReason,
  StoredAttempt,
  StoredStepResult,
  TestStepSnapshot,
} from "./db/entities.js";

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
  record_traces: boolean;
  flaky_tests: number;
  quarantined_failures: number;
  /** Once finished: FAILED tests whose case did not fail in the base run; null without a base. */
  new_failures: number | null;
  base_run_id: string | null;
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
  /**
   * Whether it runs a Playwright spec (its `playwright` is set): testColumns selects this, and the
   * claim functions' whole rows carry `playwright` itself (isSpecTest reads either).
   */
  has_spec?: boolean;
  playwright?: unknown;
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
  record_trace: boolean;
  step_results: StoredStepResult[];
  retries: number;
  retries_used: number;
  failed_attempts: number;
  flaky: boolean;
  cause: FailureCause | null;
  earlier_attempts: StoredAttempt[];
  quarantined: boolean;
  /** The failure group of its last attempt (FAILED with a cause of the test's); else null. */
  failure_group_id: string | null;
  /** FAILED while its case did not fail in the run's base (set when the run finished). */
  new_failure: boolean;
  /** That group as the reads that show it select it (testGroupColumn), else absent. */
  failure_group?: FailureGroupBriefRow | null;
  /** Its case's health in the run's environment: read with the test by the reads that show it (health.ts), else absent. */
  health?: CaseHealthRow | null;
  /** Its case's quarantine lasting now, read with `health`. */
  quarantine?: QuarantineRow | null;
  /** Its readable artifacts: read with the test by the reads that show them (store/artifacts.ts), else absent. */
  artifacts?: ArtifactRow[];
}

/** A case's health in one environment (case_health), as the reads select it. */
export interface CaseHealthRow {
  project_id: string;
  test_case_id: string;
  environment_id: string;
  name: string;
  case_version: number;
  judged: HealthState;
  recent: RecentResult[];
  fail_streak: number;
  failing_since: ResultRefRow | null;
  last_failure: ResultRefRow | null;
  last_result: ResultRefRow | null;
  /** bigint: text from a query's row, a number inside json (read it with Number). */
  results_total: string | number;
  failures_total: string | number;
  /** HealthSettings.min_results as of its latest result (what it was judged with). */
  min_results: number;
}

/** A quarantine (quarantines), as the reads select it. */
export interface QuarantineRow {
  id: string;
  project_id: string;
  test_case_id: string;
  reason: string;
  started_at: DbTimestamp;
  expires_at: DbTimestamp;
  started_by_member_id: string | null;
  ended_at: DbTimestamp | null;
  end_kind: "lifted" | "expired" | "replaced" | null;
  lifted_by_member_id: string | null;
}

/** A failure group as a test result names it (FailureGroupBrief). */
export interface FailureGroupBriefRow {
  id: string;
  occurrences: number;
  cases_affected: number;
  first_seen: { run: string; at: string };
  state: "open" | "resolved" | "reopened";
}

/** Default HealthSettings (docs/rest-api.md, "Test health and quarantine"). */
export const defaultHealthSettings = {
  window_results: 30,
  window_days: 14,
  min_results: 5,
  history_retention_days: 90,
};

/** A select of case_health rows `h` (CaseHealthRow); add a where. */
export const caseHealthSelect = "select h.* from runs.case_health h";

/** Whether quarantine `q` lasts now. */
export const lastingQuarantine = "q.ended_at is null and q.expires_at > now()";

/**
 * The columns `health`, `quarantine` and `failure_group` of a select over test_results `t` of run
 * `r`: its case's health in the run's environment, the quarantine lasting now and its last
 * attempt's failure group, as JSON (null when none).
 */
export const testHealthColumns = `(select row_to_json(h) from (${caseHealthSelect}
    where h.project_id = r.project_id and h.test_case_id = t.test_case_id and h.environment_id = r.environment_id) h) as health,
  (select row_to_json(q) from runs.quarantines q
    where q.project_id = r.project_id and q.test_case_id = t.test_case_id and ${lastingQuarantine}) as quarantine,
  (select json_build_object('id', g.id, 'occurrences', g.occurrences, 'cases_affected', g.cases_affected,
     'first_seen', g.first_seen, 'state', g.state)
   from runs.failure_groups g where g.id = t.failure_group_id) as failure_group`;

/** An artifact's metadata (Artifact), as the reads select it. */
export interface ArtifactRow {
  id: string;
  project_id: string;
  run_id: string;
  test_result_id: string;
  attempt: number;
  kind: ArtifactKind;
  name: string;
  content_type: string;
  /** bigint: text from a query's row, a number inside json_agg (read it with Number). */
  size_bytes: string | number;
  step: number;
  created_at: DbTimestamp;
  expires_at: DbTimestamp;
}

/** A run with its tests, as read in one statement or one transaction. */
export interface RunWithTests {
  run: RunRow;
  tests: TestRow[];
}

export const runColumns =
  "r.id, r.project_id, r.environment_id, r.environment_base_url, r.test_plan_id, r.name, r.status, r.skip_reason, r.total_tests, r.passed_tests, r.failed_tests, r.skipped_tests, r.credits_charged, r.charge_state, r.refund_due, r.refund_reason, r.refunded_at, r.started_at, r.finished_at, r.created_at, r.started_by_key_id, r.started_by_member_id, r.version, r.record_traces, r.flaky_tests, r.quarantined_failures, r.new_failures, r.base_run_id";

export const testColumns =
  "t.id, t.run_id, t.test_case_id, t.test_case_version, t.name, t.position, t.status, t.steps, (t.playwright is not null) as has_spec, t.summary, t.duration_ms, t.failed_step, t.attempt, t.lapsed_leases, t.lease_owner, t.lease_token, t.lease_expires_at, t.started_at, t.finished_at, t.queued_at, t.published_at, t.publish_count, t.refundable, t.skip_reason, t.version, t.record_trace, t.step_results, t.retries, t.retries_used, t.failed_attempts, t.flaky, t.cause, t.earlier_attempts, t.quarantined, t.failure_group_id, t.new_failure";

export const artifactColumns =
  "a.id, a.project_id, a.run_id, a.test_result_id, a.attempt, a.kind, a.name, a.content_type, a.size_bytes, a.step, a.created_at, a.expires_at";

/** Whether artifact `a` may be read: stored, within its retention, and of a project not deleted. */
export const readableArtifact =
  "a.state = 'stored' and a.expires_at > now() and not exists (select 1 from runs.purged_projects p where p.project_id = a.project_id)";

/**
 * The column `artifacts` of a select over test_results `t`: the readable artifacts of its ended
 * attempts in the order stored, as a JSON array (the current attempt's once it ended: never those
 * of an attempt still RUNNING). render.ts splits them by attempt (TestResult.artifacts are the last
 * attempt's, once the test is final; each TestAttempt has its own).
 */
export const testArtifactsColumn = `(
    select coalesce(json_agg(x order by x.created_at, x.id), '[]'::json)
    from (select ${artifactColumns} from runs.artifacts a
          where a.test_result_id = t.id and (t.status <> 'running' or a.attempt < t.attempt) and ${readableArtifact}) x
  ) as artifacts`;

export const isFinal = (status: RunStatus): boolean =>
  status === "passed" || status === "failed" || status === "skipped";
