import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { PlaywrightSpecSchema } from "@testrun/gen/testrun/catalog/v1/playwright_pb";
import {
  ClaimOutcomeSchema,
  FailureCause,
  SkipReason,
  type StepResult,
  type TestAssignment,
  TestAssignmentSchema,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import { callerIdentity, dbDate, maxSpecStepResults } from "@testrun/kit";
import { failureCauses } from "../causes.js";
import type { RunStatus, FailureCause as StoredCause, StoredStepResult } from "../db/entities.js";
import type { ServiceDeps } from "../deps.js";
import { isSpecTest, kindOfTest } from "../dispatcher.js";
import {
  claimRefusals,
  completeRefusals,
  heartbeatRefusals,
  invalid,
  refusal,
  releaseRefusals,
  skipRunRefusals,
} from "../errors.js";
import { attemptsEnded, leaseLapses, testsClaimed } from "../metrics.js";
import { renderRun, renderSteps, renderTest, toRunStatus } from "../render.js";
import type { RunRow, TestRow } from "../rows.js";
import { afterCommit, type Handlers } from "./context.js";

const finalStatuses: Partial<Record<TestStatus, RunStatus>> = {
  [TestStatus.PASSED]: "passed",
  [TestStatus.FAILED]: "failed",
  [TestStatus.SKIPPED]: "skipped",
};
const maxSummary = 300;
/**
 * How long a claim's grant to read variable values lasts: the executor reads them right after
 * the claim and its reachability check; a test claimed again gets a new grant.
 */
const variablesGrantMs = 5 * 60_000;
const maxDurationMs = 2 ** 31 - 1;

function requireSummary(summary: string, field = "summary"): void {
  if ([...summary].length > maxSummary) throw invalid(`${field} must be at most ${maxSummary} characters`);
  if (/[\r\n\u2028\u2029]/.test(summary)) throw invalid(`${field} must be one line`);
}

const stepStatuses: Partial<Record<TestStatus, StoredStepResult["status"]>> = {
  [TestStatus.PASSED]: "passed",
  [TestStatus.FAILED]: "failed",
  [TestStatus.SKIPPED]: "skipped",
};

/** A spec step's name and error, each one line of at most this many characters. */
const maxStepText = 300;

function requireStepText(text: string, field: string): void {
  if ([...text].length > maxStepText) throw invalid(`${field} must be at most ${maxStepText} characters`);
  if (/[\r\n\u2028\u2029]/.test(text)) throw invalid(`${field} must be one line`);
}

/**
 * CompleteTest's step results as stored, checked: numbers from 1, increasing (the steps that ran,
 * in order), durations in range. A steps test's (no names) are PASSED or FAILED with nothing after
 * a FAILED one (the first failing step ends the test). A spec test's (each named by its `test()`)
 * may also be SKIPPED and go on past a FAILED one (the runner runs every `test()`), at most
 * maxSpecStepResults. Whether the numbers stay within the test's steps is the store's to check.
 */
function storedStepResults(results: readonly StepResult[]): StoredStepResult[] {
  const spec = results.some((result) => result.name !== "");
  if (spec && results.length > maxSpecStepResults)
    throw invalid(`step_results must be at most ${maxSpecStepResults} for a spec test`);
  let previous = 0;
  return results.map((result, index) => {
    const status = stepStatuses[result.status];
    if (!status || (!spec && status === "skipped"))
      throw invalid(`step_results[${index}].status must be PASSED or FAILED${spec ? " or SKIPPED" : ""}`);
    if (result.number <= previous)
      throw invalid(`step_results[${index}].number must be at least 1 and greater than the one before`);
    if (!spec && index > 0 && results[index - 1]?.status === TestStatus.FAILED)
      throw invalid("step_results must end at the first FAILED step (the steps after it did not run)");
    if (result.durationMs < 0n || result.durationMs > BigInt(maxDurationMs))
      throw invalid(`step_results[${index}].duration_ms must be 0 to ${maxDurationMs}`);
    if (spec && result.name === "") throw invalid(`step_results[${index}].name must be set for a spec test`);
    requireStepText(result.name, `step_results[${index}].name`);
    requireStepText(result.error, `step_results[${index}].error`);
    if (result.error !== "" && status !== "failed")
      throw invalid(`step_results[${index}].error is for a FAILED step only`);
    previous = result.number;
    return {
      number: result.number,
      status,
      duration_ms: Number(result.durationMs),
      ...(result.name && { name: result.name }),
      ...(result.error && { error: result.error }),
    };
  });
}

/** The causes an executor may report: all but the runs service's own (EXECUTOR_LOST, NO_EXECUTOR). */
const reportableCauses = new Map<FailureCause, StoredCause>(
  Object.entries(failureCauses)
    .filter(([stored]) => stored !== "executor_lost" && stored !== "no_executor")
    .map(([stored, cause]) => [cause, stored as StoredCause]),
);

/** CompleteTest's cause, checked: only for FAILED (UNSPECIFIED there: ASSERTION), never the service's own. */
function reportedCause(status: RunStatus, cause: FailureCause): StoredCause | undefined {
  if (status !== "failed") {
    if (cause !== FailureCause.UNSPECIFIED) throw invalid("cause must be UNSPECIFIED unless the test FAILED");
    return undefined;
  }
  if (cause === FailureCause.UNSPECIFIED) return "assertion";
  const stored = reportableCauses.get(cause);
  if (!stored) throw invalid("cause must be one an executor decides (not EXECUTOR_LOST or NO_EXECUTOR)");
  return stored;
}

/** ClaimTests' most claims in one call (an executor asks for as many as it has free slots). */
const maxBatch = 100;
/** HeartbeatLeases' most leases in one call. */
const maxLeases = 1_000;

/**
 * What an executor needs to run a test it just claimed, with the claim's lease and variables grant;
 * `spec`: the test's Playwright spec as stored (LeaseStore.specsOf), for a spec case.
 */
function assignmentOf(deps: ServiceDeps, run: RunRow, test: TestRow, spec?: unknown): TestAssignment {
  return create(TestAssignmentSchema, {
    testResultId: test.id,
    runId: run.id,
    projectId: run.project_id,
    testCaseId: test.test_case_id,
    name: test.name,
    environmentId: run.environment_id,
    baseUrl: run.environment_base_url,
    steps: renderSteps(test),
    attempt: test.attempt,
    maxAttempts: deps.maxAttempts,
    leaseToken: test.lease_token ?? "",
    leaseExpiresAt: timestampFromDate(dbDate(test.lease_expires_at ?? new Date())),
    variablesGrant: deps.variablesGrants.issue(
      { projectId: run.project_id, testResultId: test.id },
      variablesGrantMs,
    ),
    recordTrace: run.record_traces || test.record_trace,
    ...(spec !== undefined && {
      playwright: fromJson(PlaywrightSpecSchema, spec as JsonValue, { ignoreUnknownFields: true }),
    }),
  });
}

/** The specs of the claimed tests that run one (one read for the whole batch, none without). */
function specsOfClaimed(deps: ServiceDeps, tests: readonly TestRow[]): Promise<Map<string, unknown>> {
  return deps.leases.specsOf(tests.filter(isSpecTest).map((test) => test.id));
}

/** Executor RPCs answer only the executor identity (the interceptor already keeps executors out of the others). */
export function requireExecutor(ctx: HandlerContext): void {
  if (callerIdentity(ctx) !== "executor")
    throw new ConnectError("only executors may call this method", Code.PermissionDenied);
}

/**
 * ClaimTest(s), HeartbeatTest, HeartbeatLeases, ReleaseTest, CompleteTest, SkipRun: what executors call about the
 * tests they work on, under a lease (store/leases.ts); refusals are errors.ts's.
 */
export function executorHandlers(deps: ServiceDeps): Handlers {
  const { leases, events, links } = deps;
  return {
    async claimTest(req, ctx) {
      requireExecutor(ctx);
      const executorId = [...req.executorId];
      if (executorId.length < 1 || executorId.length > 200)
        throw invalid("executor_id must be 1 to 200 characters");
      const outcome = await leases.claim(req.testResultId, req.executorId);
      if (outcome.kind === "gave_up") {
        leaseLapses.inc();
        await afterCommit(deps, outcome.runId, outcome.effects);
      }
      if (outcome.kind !== "claimed") throw refusal(claimRefusals, outcome);
      testsClaimed.inc({ pool: kindOfTest(outcome.test) });
      if (outcome.tookOverLapsed) leaseLapses.inc();
      await events.changed(outcome.run.id);
      const specs = await specsOfClaimed(deps, [outcome.test]);
      return { assignment: assignmentOf(deps, outcome.run, outcome.test, specs.get(outcome.test.id)) };
    },

    async claimTests(req, ctx) {
      requireExecutor(ctx);
      if (req.claims.length < 1 || req.claims.length > maxBatch)
        throw invalid(`claims must hold 1 to ${maxBatch} tests`);
      const ids = new Set<string>();
      for (const [index, claim] of req.claims.entries()) {
        const executorId = [...claim.executorId];
        if (executorId.length < 1 || executorId.length > 200)
          throw invalid(`claims[${index}].executor_id must be 1 to 200 characters`);
        if (ids.has(claim.testResultId)) throw invalid(`claims[${index}] names a test given before`);
        ids.add(claim.testResultId);
      }
      const { outcomes, runs } = await leases.claimMany(req.claims);
      for (const run of runs) {
        for (const effects of run.gaveUp) {
          leaseLapses.inc();
          await afterCommit(deps, undefined, effects);
        }
        // One change notice per run, however many of its tests were claimed or given up.
        if (run.claimed || run.gaveUp.length > 0) await events.changed(run.runId);
      }
      const specs = await specsOfClaimed(
        deps,
        outcomes.flatMap((outcome) => (outcome.kind === "claimed" ? [outcome.test] : [])),
      );
      return {
        outcomes: outcomes.map((outcome, index) => {
          const testResultId = req.claims[index]?.testResultId ?? "";
          if (outcome.kind !== "claimed") {
            const error = refusal(claimRefusals, outcome);
            return create(ClaimOutcomeSchema, { testResultId, code: error.code, message: error.rawMessage });
          }
          testsClaimed.inc({ pool: kindOfTest(outcome.test) });
          if (outcome.tookOverLapsed) leaseLapses.inc();
          return create(ClaimOutcomeSchema, {
            testResultId,
            assignment: assignmentOf(deps, outcome.run, outcome.test, specs.get(outcome.test.id)),
          });
        }),
      };
    },

    async heartbeatLeases(req, ctx) {
      requireExecutor(ctx);
      if (req.leases.length < 1 || req.leases.length > maxLeases)
        throw invalid(`leases must hold 1 to ${maxLeases} leases`);
      if (new Set(req.leases.map((lease) => lease.testResultId)).size < req.leases.length)
        throw invalid("leases must name each test once");
      const { leaseExpiresAt, lost } = await leases.heartbeatMany(req.leases);
      return { leaseExpiresAt: timestampFromDate(leaseExpiresAt), lost };
    },

    async heartbeatTest(req, ctx) {
      requireExecutor(ctx);
      const outcome = await leases.heartbeat(req.testResultId, req.leaseToken);
      if (outcome.kind !== "extended") throw refusal(heartbeatRefusals, outcome);
      return { leaseExpiresAt: timestampFromDate(outcome.leaseExpiresAt) };
    },

    async releaseTest(req, ctx) {
      requireExecutor(ctx);
      requireSummary(req.reason, "reason");
      const outcome = await leases.release(req.testResultId, req.leaseToken);
      if (outcome.kind !== "released") throw refusal(releaseRefusals, outcome);
      const { effects } = outcome;
      // No run changed when nothing is published: the claim was handed back before, and the run
      // did not change now.
      await afterCommit(deps, effects.publish?.[0]?.runId, effects);
      return {};
    },

    async completeTest(req, ctx) {
      requireExecutor(ctx);
      const status = finalStatuses[req.status];
      if (!status) throw invalid("status must be PASSED, FAILED or SKIPPED");
      requireSummary(req.summary);
      if (req.durationMs < 0n) throw invalid("duration_ms must not be negative");
      if (req.durationMs > BigInt(maxDurationMs))
        throw invalid(`duration_ms must be at most ${maxDurationMs}`);
      // The upper bound (the number of steps) is checked by the store, which reads them (no_such_step).
      if (req.failedStep < 0 || (req.failedStep > 0 && status !== "failed"))
        throw invalid("failed_step must be 0 unless the test FAILED, and never negative");
      const cause = reportedCause(status, req.cause);
      const done = await leases.complete(req.testResultId, req.leaseToken, {
        status,
        summary: req.summary,
        durationMs: Number(req.durationMs),
        failedStep: req.failedStep,
        stepResults: storedStepResults(req.stepResults),
        ...(cause && { cause }),
      });
      if (done.kind !== "completed") throw refusal(completeRefusals, done);
      await afterCommit(deps, done.run.id, done.effects);
      attemptsEnded.inc({
        status,
        cause: cause ?? "",
        kind: kindOfTest(done.test),
        retried: done.retried ? "true" : "false",
      });
      return {
        test: renderTest(done.test, done.run.project_id, links),
        runStatus: toRunStatus(done.run.status),
        runFinished: done.run.finished_at !== null,
        retried: done.retried === true,
      };
    },

    async skipRun(req, ctx) {
      requireExecutor(ctx);
      if (req.reason !== SkipReason.ENVIRONMENT_UNREACHABLE)
        throw invalid("reason must be ENVIRONMENT_UNREACHABLE");
      requireSummary(req.summary);
      const skipped = await leases.skipRun(req.runId, req.testResultId, req.leaseToken, req.summary);
      if (skipped.kind !== "skipped") throw refusal(skipRunRefusals, skipped);
      await afterCommit(deps, req.runId, skipped.effects);
      return { run: renderRun(skipped.result.run, skipped.result.tests, links) };
    },
  };
}
