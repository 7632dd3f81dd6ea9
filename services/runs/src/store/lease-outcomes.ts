import type { RunRow, RunWithTests, TestRow } from "../rows.js";
import type { Effects } from "./settle.js";

// The configuration and the answers of the lease calls: what leases.ts (one test) and claims.ts
// (a batch of them) share, in a file of their own so that neither imports the other back.

/** Timing rules of leases and dispatch, from configuration. */
export interface Timing {
  leaseMs: number;
  maxAttempts: number;
  /** MAX_RUNNING_PER_PROJECT: a project's share of the executors' slots (0: no limit). */
  maxRunningPerProject?: number;
}

// What a lease call can find instead of doing its work. Nothing it did is kept (the transaction
// rolls back); the service tells the executor which it was (service.ts, errors.ts).

/** The test (or its run) is unknown, or its run was never started. */
type NotFound = { kind: "not_found" };
/** The test is PASSED, FAILED or SKIPPED: nobody works on it any more. */
type Final = { kind: "final" };
/** Another claim (a newer lease token) is the current one. */
type NotCurrent = { kind: "not_current" };

export type ClaimOutcome =
  /** `tookOverLapsed`: the test's earlier lease had lapsed (a lapse, counted in the metrics). */
  | { kind: "claimed"; run: RunRow; test: TestRow; tookOverLapsed: boolean }
  /** The lease lapsed for the last allowed time: the test is now FAILED (committed). */
  | { kind: "gave_up"; runId: string; effects: Effects }
  /** The project holds its share of the slots while others wait: the test stays QUEUED (committed). */
  | { kind: "over_share" }
  | NotFound
  | Final
  /** Another executor holds a lease that has not lapsed. */
  | { kind: "lease_held" };

export type HeartbeatOutcome = { kind: "extended"; leaseExpiresAt: Date } | NotFound | Final | NotCurrent;

export type ReleaseOutcome = { kind: "released"; effects: Effects } | NotFound | Final | NotCurrent;

export type CompleteOutcome =
  /** `retried`: the report ended an attempt, not the test, which is QUEUED again for the next one. */
  | { kind: "completed"; run: RunRow; test: TestRow; effects: Effects; retried?: boolean }
  | NotFound
  /** The report names a failed step beyond the test's `steps`. */
  | { kind: "no_such_step"; steps: number }
  /** A step result's number is beyond the test's `steps`. */
  | { kind: "no_such_step_result"; steps: number }
  /** Final already, and this is not a repetition of the report that made it so. */
  | Final
  | NotCurrent;

export type SkipRunOutcome =
  | { kind: "skipped"; result: RunWithTests; effects: Effects }
  | { kind: "run_not_found" }
  /** The run finished meanwhile (cancelled, say): the claim was settled with it. */
  | { kind: "run_finished" }
  | { kind: "test_not_found" }
  /** A test of the run already PASSED or FAILED: the environment did answer. */
  | { kind: "tests_ran" }
  | NotCurrent;
