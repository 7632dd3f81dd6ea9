import { defineEntity, p } from "@mikro-orm/core";

// Ids are opaque prefixed strings made by `newId` (run_, tr_). Project, environment, plan, test case,
// key and member ids belong to other services' data: plain text columns, no foreign keys. Field
// names follow proto/testrun/runs/v1/runs.proto.

/** Statuses of a run and of each of its tests (docs/rest-api.md, "How runs and tests move"). */
export const RUN_STATUSES = ["queued", "running", "passed", "failed", "skipped"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Why a run was skipped. */
export const SKIP_REASONS = ["environment_unreachable", "cancelled", "no_executor"] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/** Why an attempt FAILED (FailureCause); the last three are the system's own. */
export const FAILURE_CAUSES = [
  "assertion",
  "locator",
  "timeout",
  "network",
  "egress_refused",
  "environment_unreachable",
  "browser",
  "executor_lost",
  "no_executor",
] as const;
export type FailureCause = (typeof FAILURE_CAUSES)[number];

/** Causes that are the system's fault: retried without using the test's retries, never flaky. */
export const SYSTEM_CAUSES: ReadonlySet<FailureCause> = new Set(["browser", "executor_lost", "no_executor"]);

/**
 * Where a run's charge stands. A run is stored `pending` before billing is asked to charge it, so a
 * crash between the charge and the commit leaves a row the reconciler finds; it becomes `charged`
 * once billing took the credits, or `abandoned` when the start failed and the charge (if any) is to
 * be given back. Only `charged` runs are visible and dispatched.
 */
export const CHARGE_STATES = ["pending", "charged", "abandoned"] as const;
export type ChargeState = (typeof CHARGE_STATES)[number];

// Final statuses carry a finish time and nothing else does: `finished` and `finishedAt` never disagree.
const FINISHED_MATCHES_STATUS = "(finished_at is not null) = (status in ('passed', 'failed', 'skipped'))";

/**
 * A run of a selection of test cases against one environment. What it ran against is snapshotted
 * (`environmentBaseUrl`, and each test's steps), so later catalog edits never change a run.
 * `durationMs` of the API is `finishedAt - startedAt`, not stored.
 */
export const Run = defineEntity({
  name: "Run",
  tableName: "runs",
  properties: {
    id: p.text().primary(),
    projectId: p.text(),
    environmentId: p.text(),
    /** The environment's base URL when the run started (no trailing slash). */
    environmentBaseUrl: p.text(),
    /** Null unless the run was started from a plan. */
    testPlanId: p.text().nullable(),
    name: p.text(),
    status: p.enum(RUN_STATUSES),
    /** Set only on a SKIPPED run, and not necessarily then (every test may have been skipped on its own). */
    skipReason: p.enum(SKIP_REASONS).nullable(),
    totalTests: p.integer(),
    passedTests: p.integer().default(0),
    failedTests: p.integer().default(0),
    skippedTests: p.integer().default(0),
    /**
     * Tests whose credit is due back if the run ends now, and tests skipped for want of an
     * executor. Like the three counts above, kept by the statement that changes a test (the trigger
     * of Migration20261128150000_run_counters): a run's end needs no count over its tests.
     */
    refundableTests: p.integer().default(0),
    noExecutorTests: p.integer().default(0),
    /** PASSED tests that are flaky (TestResult.flaky), kept by the same trigger. */
    flakyTests: p.integer().default(0),
    /** FAILED tests that were quarantined, kept by the same trigger: the run's status leaves them out. */
    quarantinedFailures: p.integer().default(0),
    /** Once finished: its FAILED tests whose case did not fail in its base run; null without a base. */
    newFailures: p.integer().nullable(),
    /** Once finished: its base run (CompareRuns' default), if any. */
    baseRunId: p.text().nullable(),
    /** The project's variables' names when it started (never values); null for older runs. */
    variableNames: p.array().nullable(),
    /** Credits taken when the run started (one per test); refunds are recorded by billing. */
    creditsCharged: p.integer().default(0),
    chargeState: p.enum(CHARGE_STATES).default("pending"),
    /**
     * Credits to give back, fixed when the run finished (tests skipped without executing), so that
     * every retry of the refund asks billing for the same amount. 0: nothing to refund.
     */
    refundDue: p.integer().default(0),
    /** Why, for the ledger ("cancelled", "no executor", …); set with refundDue. */
    refundReason: p.text().nullable(),
    /** When billing confirmed the refund; null while one is due (the reconciler retries it). */
    refundedAt: p.datetime().nullable(),
    /** Set from creation in this version; null only for a QUEUED run. */
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    /** The API key that started the run; null when started otherwise (admin CLI, web console). */
    startedByKeyId: p.text().nullable(),
    /** The console member, or the key's creator, it was started for; null when an operator started it. */
    startedByMemberId: p.text().nullable(),
    /**
     * Advanced by every visible change of one of its tests (and so of its counts and status), in
     * the changing statement itself: the trigger `runs.advance_run_version` of the migration
     * Migration20261125000000_run_version. WatchRun reads only the tests changed after a version.
     */
    version: p.bigint("number").default(0),
    /** Keep a Playwright trace of every browser test, passed or failed (StartRunRequest.record_traces). */
    recordTraces: p.boolean().default(false),
    /** StartRunRequest.idempotency_key (services only): a repeat returns this run. */
    idempotencyKey: p.text().nullable(),
  },
  uniques: [
    // One run per key and project; a start given up (abandoned) frees its key for a retry.
    {
      name: "runs_project_idempotency_key_unique",
      properties: ["projectId", "idempotencyKey"],
      where: "idempotency_key is not null and charge_state <> 'abandoned'",
    },
  ],
  indexes: [
    // ListRuns (GET /v1/runs): a project's runs newest first, at most 100 (the btree is read backwards).
    { name: "runs_project_created_index", properties: ["projectId", "createdAt", "id"] },
    // ListRuns filtered by status, test plan or environment, a page at a time: the keyset
    // (created_at, id) of each filter read backwards, so a rare status or plan is not found by
    // walking every run of the project.
    {
      name: "runs_project_status_created_index",
      properties: ["projectId", "status", "createdAt", "id"],
    },
    {
      name: "runs_plan_created_index",
      properties: ["testPlanId", "createdAt", "id"],
      where: "test_plan_id is not null",
    },
    { name: "runs_environment_created_index", properties: ["environmentId", "createdAt", "id"] },
    // The reconciler's sweep over runs not yet final (dispatch deadline, runs whose tests are all
    // final but whose status was not updated); stays small, since finished runs leave it.
    { name: "runs_unfinished_index", properties: ["createdAt"], where: "status in ('queued', 'running')" },
    // ListFinishedRuns: finished runs in the order they finished.
    {
      name: "runs_finished_index",
      properties: ["finishedAt", "id"],
      where: "finished_at is not null and charge_state = 'charged'",
    },
    // The reconciler: starts left half-done, and refunds not yet confirmed by billing.
    {
      name: "runs_repair_index",
      properties: ["createdAt"],
      where: "charge_state <> 'charged' or (refund_due > 0 and refunded_at is null)",
    },
  ],
  checks: [
    // Spec limit; a default name made from a long plan name or tag list is cut to fit.
    { name: "runs_name_length", expression: "char_length(name) >= 1 and char_length(name) <= 200" },
    { name: "runs_finished_at_matches_status", expression: FINISHED_MATCHES_STATUS },
    { name: "runs_skip_reason_only_when_skipped", expression: "skip_reason is null or status = 'skipped'" },
    {
      name: "runs_counts_consistent",
      expression:
        "passed_tests >= 0 and failed_tests >= 0 and skipped_tests >= 0 and passed_tests + failed_tests + skipped_tests <= total_tests",
    },
    { name: "runs_credits_charged_not_negative", expression: "credits_charged >= 0" },
    { name: "runs_refund_within_charge", expression: "refund_due >= 0 and refund_due <= credits_charged" },
  ],
});

/** Free-form here: the catalog validated the steps; the executor interprets them. */
export type TestStepSnapshot = Record<string, unknown>;

/**
 * One test of a run: a test case's steps as they were when the run started, and its outcome. An
 * executor that claims it holds a lease (`leaseOwner`, `leaseToken`, `leaseExpiresAt`) and extends
 * it by heartbeats; a lapsed lease lets another executor take the test over. The lease fields may
 * stay set after the claim ends, so that a repeated CompleteTest or ReleaseTest is recognised.
 */
export const TestResult = defineEntity({
  name: "TestResult",
  tableName: "test_results",
  properties: {
    id: p.text().primary(),
    runId: p.manyToOne(Run).mapToPk().joinColumn("run_id").deleteRule("cascade"),
    testCaseId: p.text(),
    /**
     * The test case's version its name and steps were taken from (the catalog's TestCase.version),
     * so the console can show exactly what ran; 0 for tests started before versions were kept.
     */
    testCaseVersion: p.integer().default(0),
    /** The test case's name when the run started. */
    name: p.text(),
    /** Order of the test in its run, from 0. */
    position: p.integer(),
    status: p.enum(RUN_STATUSES),
    steps: p.json<TestStepSnapshot[]>(),
    /**
     * For a Playwright spec case, its spec and helper files when the run started (the catalog's
     * PlaywrightSpec as proto JSON; steps are then empty); else null. Read only to hand a claimed
     * test to its executor (TestAssignment.playwright): up to 1 MiB, it stays out of other reads.
     */
    playwright: p.json<Record<string, unknown>>().nullable(),
    /** One line, at most 300 characters, variable values already replaced by `{{NAME}}`; null until final. */
    summary: p.text().nullable(),
    /** How long the test executed; null until final, and for a test skipped without executing. */
    durationMs: p.integer().nullable(),
    /** The number (from 1) of the step that failed; null unless the test FAILED at a step. */
    failedStep: p.integer().nullable(),
    /** Number of the current or last claim: 0 while never claimed, +1 for each claim. */
    attempt: p.integer().default(0),
    /**
     * Attempts the system ended: leases that lapsed and browsers that failed (cause BROWSER); at
     * max_attempts the test is FAILED. Hand-backs (ReleaseTest) do not count.
     */
    lapsedLeases: p.integer().default(0),
    /** The executor worker holding, or that last held, the claim (ClaimTestRequest.executor_id). */
    leaseOwner: p.text().nullable(),
    leaseToken: p.text().nullable(),
    leaseExpiresAt: p.datetime().nullable(),
    /** When the current attempt started executing; null while QUEUED. */
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
    /** When the test last became QUEUED (start, hand-back); the dispatch deadline counts from it. */
    queuedAt: p.datetime(),
    /** When it was last published to the executors' queue; null if never (publishing failed). */
    publishedAt: p.datetime().nullable(),
    /** How often it was published; republishing backs off with it. */
    publishCount: p.integer().default(0),
    /** Skipped without being executed, so its credit goes back when the run finishes. */
    refundable: p.boolean().default(false),
    /** Why the service skipped it (not set when an executor reported SKIPPED). */
    skipReason: p.enum(SKIP_REASONS).nullable(),
    /** Its run's version as of the test's last visible change (set by the same trigger). */
    version: p.bigint("number").default(0),
    /** The test case asked for a trace even when the test passes (SelectedTestCase.record_trace). */
    recordTrace: p.boolean().default(false),
    /** Its test case was quarantined when the run started: a failure of it does not fail the run. */
    quarantined: p.boolean().default(false),
    /** The failure group of its last attempt (FAILED with a cause of the test's). */
    failureGroupId: p.text().nullable(),
    /** FAILED while its case did not fail in the run's base run (set when the run finished). */
    newFailure: p.boolean().default(false),
    /** How each step that ran went, as the executor reported it with the result; `[]` until then. */
    stepResults: p.json<StoredStepResult[]>().default("[]"),
    /** How many times a FAILED attempt is retried (0 to 3), decided at the start (TestResult.retries). */
    retries: p.integer().default(0),
    /** Failed attempts retried so far under `retries` (the system's causes are not counted here). */
    retriesUsed: p.integer().default(0),
    /** Attempts that FAILED with a cause of the test (not the system's): a later pass is flaky. */
    failedAttempts: p.integer().default(0),
    /** PASSED after a failed attempt of the test's own (failedAttempts > 0). */
    flaky: p.boolean().default(false),
    /** Why the test FAILED (its last attempt's cause); null otherwise. */
    cause: p.enum(FAILURE_CAUSES).nullable(),
    /** The attempts that ended without ending the test, oldest first (the current one is the row's own). */
    earlierAttempts: p.json<StoredAttempt[]>().default("[]"),
  },
  uniques: [
    // A run's tests in order (GetRun) and the tally of a run's outcomes: both by run_id.
    { name: "test_results_run_position_unique", properties: ["runId", "position"] },
  ],
  indexes: [
    // The reconciler: tests still QUEUED (to publish again, or skip at the dispatch deadline) and
    // RUNNING ones whose lease lapsed (`status = 'running' and lease_expires_at < now()`); final
    // tests leave this index, so it stays small.
    {
      name: "test_results_pending_index",
      properties: ["status", "leaseExpiresAt"],
      where: "status in ('queued', 'running')",
    },
    // Whether executors are at work at all (the latest claim), so a backlog behind busy executors
    // is not mistaken for tests no executor took (no_executor).
    { name: "test_results_started_index", properties: ["startedAt"], where: "started_at is not null" },
  ],
  checks: [
    { name: "test_results_summary_length", expression: "char_length(summary) <= 300" },
    { name: "test_results_finished_at_matches_status", expression: FINISHED_MATCHES_STATUS },
    // A RUNNING test is always under a lease, so the reconciler can tell when it lapsed.
    {
      name: "test_results_running_is_leased",
      expression: "status <> 'running' or (lease_token is not null and lease_expires_at is not null)",
    },
    {
      name: "test_results_numbers_not_negative",
      expression:
        "position >= 0 and attempt >= 0 and lapsed_leases >= 0 and duration_ms >= 0 and publish_count >= 0",
    },
    { name: "test_results_steps_is_array", expression: "jsonb_typeof(steps) = 'array'" },
    { name: "test_results_step_results_is_array", expression: "jsonb_typeof(step_results) = 'array'" },
    {
      name: "test_results_failed_step_when_failed",
      expression: "failed_step is null or (status = 'failed' and failed_step >= 1)",
    },
  ],
});

/** One step's outcome as stored (TestResult.step_results). */
export interface StoredStepResult {
  number: number;
  /** "skipped" only for a Playwright spec's `test.skip`. */
  status: "passed" | "failed" | "skipped";
  duration_ms: number;
  /** A Playwright spec's step: its `test()`'s title. */
  name?: string;
  /** A Playwright spec's FAILED step: its redacted error. */
  error?: string;
}

/**
 * An attempt that ended without ending its test (TestAttempt), as stored in
 * test_results.earlier_attempts. `lease_token` (never shown) lets a repeated CompleteTest of a
 * retried attempt be recognised.
 */
export interface StoredAttempt {
  number: number;
  status: "failed" | "skipped";
  started_at: string | null;
  finished_at: string;
  duration_ms: number | null;
  summary: string;
  failed_step: number | null;
  step_results: StoredStepResult[];
  cause: FailureCause | null;
  executor_id: string | null;
  lease_token: string | null;
}

/** What an artifact holds (ArtifactKind). */
export const ARTIFACT_KINDS = ["screenshot", "trace", "browser_log", "http_response"] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

/**
 * Where an artifact stands. `pending`: its place is taken (it counts against the caps) and its
 * bytes are on their way to the store; `stored`: readable; `deleting`: unreadable, its bytes and
 * then its row to be deleted by the sweeper from `deleteAfter` on (artifacts/sweeper.ts).
 */
export const ARTIFACT_STATES = ["pending", "stored", "deleting"] as const;
export type ArtifactState = (typeof ARTIFACT_STATES)[number];

/**
 * A file a test's attempt produced: its metadata, always here; its bytes in the artifact store
 * (artifacts/contents.ts: the artifact_contents table, or an S3 bucket) under a key made from its
 * project, run and id. Rows are deleted only by the sweeper, after their bytes, so that no bytes
 * are left without a row: a test result or run with artifacts cannot be deleted (no cascade).
 */
export const Artifact = defineEntity({
  name: "Artifact",
  tableName: "artifacts",
  properties: {
    id: p.text().primary(),
    projectId: p.text(),
    runId: p.manyToOne(Run).mapToPk().joinColumn("run_id"),
    testResultId: p.manyToOne(TestResult).mapToPk().joinColumn("test_result_id"),
    /** The claim (TestResult.attempt) that produced it; a new claim drops the earlier ones'. */
    attempt: p.integer(),
    kind: p.enum(ARTIFACT_KINDS),
    name: p.text(),
    contentType: p.text(),
    sizeBytes: p.bigint("number"),
    /** The step it was taken at (from 1); 0 for the whole test. */
    step: p.integer(),
    state: p.enum(ARTIFACT_STATES).default("pending"),
    createdAt: p.datetime(),
    /**
     * When the retention period (ARTIFACT_RETENTION_DAYS in force when it was stored) ends: from
     * then on it is unreadable, and the sweeper deletes it.
     */
    expiresAt: p.datetime(),
    /** For `deleting`: when the sweeper may delete it (later for an upload that may still be under way). */
    deleteAfter: p.datetime().nullable(),
  },
  indexes: [
    // A test's artifacts (reads, the count cap, a new claim's drop).
    { name: "artifacts_test_result_index", properties: ["testResultId", "createdAt"] },
    // The run's cap: the sum of its artifacts' sizes.
    { name: "artifacts_run_index", properties: ["runId"] },
    // Deleting a project's artifacts.
    { name: "artifacts_project_index", properties: ["projectId"] },
    // The sweeper: stored ones past their retention, and uploads that never finished.
    { name: "artifacts_expiry_index", properties: ["expiresAt"], where: "state = 'stored'" },
    { name: "artifacts_pending_index", properties: ["createdAt"], where: "state = 'pending'" },
    // The sweeper: those due for deletion.
    { name: "artifacts_delete_after_index", properties: ["deleteAfter"], where: "state = 'deleting'" },
  ],
  checks: [
    { name: "artifacts_name_length", expression: "char_length(name) between 1 and 100" },
    { name: "artifacts_numbers_not_negative", expression: "size_bytes >= 0 and step >= 0 and attempt >= 1" },
    { name: "artifacts_deleting_has_time", expression: "(state = 'deleting') = (delete_after is not null)" },
  ],
});

/**
 * The bytes of artifacts when ARTIFACT_STORE is `postgres` (artifacts/postgres-contents.ts), by
 * the same key an object store would use. Apart from the metadata, so that the store behind the
 * interface is the only code that reads or writes it.
 */
export const ArtifactContent = defineEntity({
  name: "ArtifactContent",
  tableName: "artifact_contents",
  properties: {
    key: p.text().primary(),
    content: p.blob(),
  },
});

/**
 * Projects the catalog deleted (PurgeProjectArtifacts): their artifacts are unreadable, the
 * sweeper deletes them, and PutArtifact refuses new ones. Kept for good: one small row per
 * deleted project, so that an executor still working on a test of it cannot store anything.
 */
export const PurgedProject = defineEntity({
  name: "PurgedProject",
  tableName: "purged_projects",
  properties: {
    projectId: p.text().primary(),
    purgedAt: p.datetime(),
  },
});

/** A test case's state in one environment as its results give it (CaseHealth.judged). */
export const HEALTH_STATES = ["unknown", "stable", "flaky", "failing", "new_failure"] as const;
export type HealthState = (typeof HEALTH_STATES)[number];

/** A project's health window and history retention (HealthSettings); defaults without a row. */
export const HealthSettings = defineEntity({
  name: "HealthSettings",
  tableName: "health_settings",
  properties: {
    projectId: p.text().primary(),
    windowResults: p.integer().default(30),
    windowDays: p.integer().default(14),
    minResults: p.integer().default(5),
    historyRetentionDays: p.integer().default(90),
    updatedAt: p.datetime(),
  },
});

/**
 * A test case's health in one environment, kept by the statement that ends each of its tests
 * (the trigger of Migration20261128200000_test_health): its latest results within the window,
 * newest first, the state they give, and counts since its first result.
 */
export const CaseHealth = defineEntity({
  name: "CaseHealth",
  tableName: "case_health",
  properties: {
    projectId: p.text().primary(),
    testCaseId: p.text().primary(),
    environmentId: p.text().primary(),
    name: p.text().default(""),
    caseVersion: p.integer().default(0),
    judged: p.enum(HEALTH_STATES).default("unknown"),
    recent: p.json<RecentResult[]>().default("[]"),
    failStreak: p.integer().default(0),
    failingSince: p.json<ResultRefRow>().nullable(),
    lastFailure: p.json<ResultRefRow>().nullable(),
    lastResult: p.json<ResultRefRow>().nullable(),
    windowFailures: p.integer().default(0),
    lastResultAt: p.datetime().nullable(),
    minResults: p.integer().default(5),
    resultsTotal: p.bigint("number").default(0),
    failuresTotal: p.bigint("number").default(0),
    updatedAt: p.datetime(),
  },
  indexes: [
    {
      name: "case_health_by_state",
      properties: ["projectId", "environmentId", "judged", "windowFailures", "lastResultAt"],
    },
  ],
});

/** Where a result is (ResultRef), as case_health keeps it. */
export interface ResultRefRow {
  run: string;
  id: string;
  v: number;
  at: string;
}

/** One result in a case's window: `o` p (passed), r (passed on retry), f (failed); `d` its duration. */
export interface RecentResult extends ResultRefRow {
  o: "p" | "r" | "f";
  d: number | null;
}

/** A test case's quarantine (Quarantine); at most one not ended per case. */
export const Quarantine = defineEntity({
  name: "Quarantine",
  tableName: "quarantines",
  properties: {
    id: p.text().primary(),
    projectId: p.text(),
    testCaseId: p.text(),
    reason: p.text(),
    startedAt: p.datetime(),
    expiresAt: p.datetime(),
    startedByMemberId: p.text().nullable(),
    endedAt: p.datetime().nullable(),
    endKind: p.enum(["lifted", "expired", "replaced"] as const).nullable(),
    liftedByMemberId: p.text().nullable(),
  },
});

/** A quarantine started, lifted or expired, in order (ListQuarantineEvents). */
export const QuarantineEvent = defineEntity({
  name: "QuarantineEvent",
  tableName: "quarantine_events",
  properties: {
    seq: p.bigint("number").primary().autoincrement(),
    type: p.enum(["started", "lifted", "expired"] as const),
    quarantineId: p.manyToOne(Quarantine).mapToPk().joinColumn("quarantine_id").deleteRule("cascade"),
    at: p.datetime(),
  },
});

/**
 * Failed attempts of a project that failed the same way (Migration20261128220000_failure_groups:
 * the trigger that keeps them says how the fingerprint is made).
 */
export const FailureGroup = defineEntity({
  name: "FailureGroup",
  tableName: "failure_groups",
  properties: {
    id: p.text().primary(),
    projectId: p.text(),
    fingerprint: p.text(),
    stepKind: p.text(),
    action: p.text(),
    target: p.text(),
    cause: p.enum(FAILURE_CAUSES),
    message: p.text(),
    state: p.enum(["open", "resolved", "reopened"] as const).default("open"),
    occurrences: p.integer().default(0),
    casesAffected: p.integer().default(0),
    openCases: p.integer().default(0),
    firstSeen: p.json<Record<string, unknown>>(),
    lastSeen: p.json<Record<string, unknown>>(),
    lastSeenAt: p.datetime(),
    resolvedAt: p.datetime().nullable(),
  },
  uniques: [{ name: "failure_groups_fingerprint_unique", properties: ["projectId", "fingerprint"] }],
});

/** One failed attempt in a group; deleted with its test result (the group's counts outlive it). */
export const FailureOccurrence = defineEntity({
  name: "FailureOccurrence",
  tableName: "failure_occurrences",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    groupId: p.manyToOne(FailureGroup).mapToPk().joinColumn("group_id").deleteRule("cascade"),
    testResultId: p.manyToOne(TestResult).mapToPk().joinColumn("test_result_id").deleteRule("cascade"),
    runId: p.text(),
    attempt: p.integer(),
    testCaseId: p.text(),
    testCaseName: p.text(),
    caseVersion: p.integer(),
    environmentId: p.text(),
    summary: p.text(),
    at: p.datetime(),
  },
});

/** A test case in a group, per environment: open until it passes there again. */
export const FailureGroupCase = defineEntity({
  name: "FailureGroupCase",
  tableName: "failure_group_cases",
  properties: {
    groupId: p.manyToOne(FailureGroup).primary().mapToPk().joinColumn("group_id").deleteRule("cascade"),
    testCaseId: p.text().primary(),
    environmentId: p.text().primary(),
    name: p.text(),
    occurrences: p.integer().default(0),
    lastSeenAt: p.datetime(),
    open: p.boolean().default(true),
  },
});

export const entities = [
  Run,
  TestResult,
  Artifact,
  ArtifactContent,
  PurgedProject,
  HealthSettings,
  CaseHealth,
  Quarantine,
  QuarantineEvent,
  FailureGroup,
  FailureOccurrence,
  FailureGroupCase,
];
