import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { StepSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
import {
  RunStatus as ApiRunStatus,
  type RunsService,
  SkipReason,
  StartRunRequestSchema,
  TestAssignmentSchema,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import { callerIdentity, dbDate, requireActor } from "@testrun/kit";
import type { RunStatus } from "./db/entities.js";
import type { ServiceDeps } from "./deps.js";
import {
  claimRefusals,
  completeRefusals,
  heartbeatRefusals,
  invalid,
  refusal,
  releaseRefusals,
  skipRunRefusals,
} from "./errors.js";
import { renderRun, renderTest, toRunStatus } from "./render.js";
import { startRun } from "./start.js";
import { decodePageToken } from "./store/reads.js";
import type { Effects } from "./store/settle.js";

/** The RunsService methods the executor identity may call (and only it). */
export const executorMethods = ["ClaimTest", "HeartbeatTest", "ReleaseTest", "CompleteTest", "SkipRun"];

const notFound = () => new ConnectError("no such run in this project", Code.NotFound);

/** ListRuns' status filter; UNSPECIFIED (and any unknown number) is not in it. */
const listStatuses: Partial<Record<ApiRunStatus, RunStatus>> = {
  [ApiRunStatus.QUEUED]: "queued",
  [ApiRunStatus.RUNNING]: "running",
  [ApiRunStatus.PASSED]: "passed",
  [ApiRunStatus.FAILED]: "failed",
  [ApiRunStatus.SKIPPED]: "skipped",
};

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

/** Executor RPCs answer only the executor identity (the interceptor already keeps executors out of the others). */
function requireExecutor(ctx: HandlerContext): void {
  if (callerIdentity(ctx) !== "executor")
    throw new ConnectError("only executors may call this method", Code.PermissionDenied);
}

/** "<name> (rerun)" or "<name> (rerun of failed)", the original cut so the whole fits 200 characters. */
export function rerunName(original: string, failedOnly: boolean): string {
  const suffix = failedOnly ? " (rerun of failed)" : " (rerun)";
  return [...original].slice(0, 200 - suffix.length).join("") + suffix;
}

export function runsService(deps: ServiceDeps): ServiceImpl<typeof RunsService> {
  const { reads, leases, cancels, events, watches, access, credits, dispatcher, links, logger } = deps;

  /**
   * Every actor is authorized by the catalog (CheckAccess; a cached grant is used only under the
   * current access epoch: kit AccessCache), which also tells an unknown project (NOT_FOUND). For an API key that is its creator's rights, checked on every
   * call, reads included: the gateway verified the key, but a key whose creator lost the rights
   * it acts with must stop at once, even while the keys service (and so the gateway's key cache)
   * has not yet been told (docs/rest-api.md, "Authentication").
   */
  const authorize = async (actor: Actor | undefined, projectId: string, permission: Permission) => {
    const kind = requireActor(actor);
    if (!projectId) throw invalid("project_id is required");
    if (kind === "apiKey" && actor?.kind.case === "apiKey") {
      // Settled here without a call: another project's runs do not exist for a key, and no key
      // changes runs.
      if (actor.kind.value.projectId !== projectId) throw notFound();
      if (permission === Permission.EDIT)
        throw new ConnectError("API keys cannot change runs", Code.PermissionDenied);
    }
    await access.require(actor, projectId, permission);
  };

  const readRun = async (projectId: string, runId: string) => {
    const found = await reads.getRun(projectId, runId);
    if (!found) throw notFound();
    return renderRun(found.run, found.tests, links);
  };
  const invalidStatus = (): never => {
    throw invalid("statuses must be QUEUED, RUNNING, PASSED, FAILED or SKIPPED");
  };
  const invalidToken = (): never => {
    throw invalid("page_token is not valid");
  };

  /** What a committed write left to do: refund, publish. */
  const follow = async (effects: Effects) => {
    if (effects.publish) await dispatcher.publish(effects.publish);
    if (effects.refundRunId) await credits.settle(effects.refundRunId);
  };

  return {
    async startRun(req, context) {
      return { run: await startRun(deps, req, context.signal) };
    },

    async getRun(req) {
      await authorize(req.actor, req.projectId, Permission.READ);
      return { run: await readRun(req.projectId, req.runId) };
    },

    async listRuns(req) {
      await authorize(req.actor, req.projectId, Permission.READ);
      if (req.limit < 0) throw invalid("limit must not be negative");
      const limit = req.limit === 0 ? 20 : Math.min(req.limit, 100);
      const statuses = req.statuses.map((s) => listStatuses[s] ?? invalidStatus());
      const after = req.pageToken ? (decodePageToken(req.pageToken) ?? invalidToken()) : undefined;
      const page = await reads.listRuns(
        req.projectId,
        { statuses, testPlanId: req.testPlanId, environmentId: req.environmentId },
        after,
        limit,
      );
      return { runs: page.runs.map((row) => renderRun(row, undefined, links)), nextPageToken: page.next };
    },

    async *watchRun(req, context) {
      try {
        await authorize(req.actor, req.projectId, Permission.READ);
        if (!req.runId) throw notFound();
        yield* watches.watch(req.projectId, req.runId, req.mode, context.signal);
      } catch (error) {
        // A stream's errors pass the call-logging interceptor by (it returns when the stream
        // opens), so what it does for other calls is done here: no driver message reaches a caller.
        // A caller that closed its stream or went away is normal (a run page left, a long-poll
        // answered): writing to its closed stream fails, and that is no error of ours.
        if (context.signal.aborted) {
          logger.debug({ err: error, rpc: "WatchRun" }, "the caller left the stream");
          return;
        }
        if (error instanceof ConnectError) throw error;
        logger.error({ err: error, rpc: "WatchRun" }, "rpc crashed");
        throw new ConnectError("internal error", Code.Internal);
      }
    },

    async getTestResult(req) {
      await authorize(req.actor, req.projectId, Permission.READ);
      const found = await reads.getTestResult(req.projectId, req.runId, req.testResultId);
      if (!found.run) throw notFound();
      if (!found.test) throw new ConnectError("no such test in this run", Code.NotFound);
      return {
        test: renderTest(found.test, req.projectId, links),
        steps: found.test.steps.map((step) => fromJson(StepSchema, step as JsonValue)),
        maxAttempts: deps.maxAttempts,
      };
    },

    async cancelRun(req) {
      // Members need EDIT; an API key may cancel what it may start (a pipeline stops its own runs).
      const keyActor = req.actor?.kind.case === "apiKey";
      await authorize(req.actor, req.projectId, keyActor ? Permission.START_RUN : Permission.EDIT);
      const cancelled = await cancels.cancel(req.projectId, req.runId);
      if (!cancelled) throw notFound();
      if (!cancelled.alreadyFinished) await events.changed(req.runId);
      await follow(cancelled.effects);
      return {
        run: renderRun(cancelled.result.run, cancelled.result.tests, links),
        alreadyFinished: cancelled.alreadyFinished,
      };
    },

    async rerunRun(req, context) {
      // A key reruns what it may start, and is told so when its creator can no longer start runs
      // (the start below checks it again, as for any start); members need to read the run first.
      const keyActor = req.actor?.kind.case === "apiKey";
      await authorize(req.actor, req.projectId, keyActor ? Permission.START_RUN : Permission.READ);
      const found = await reads.getRun(req.projectId, req.runId);
      if (!found) throw notFound();
      const tests = req.failedOnly ? found.tests.filter((test) => test.status === "failed") : found.tests;
      const testCaseIds = [...new Set(tests.map((test) => test.test_case_id))];
      if (testCaseIds.length === 0) throw invalid(`nothing to rerun: no test of run ${req.runId} failed`);
      // Start rights are the catalog's to check, as for any start (the selection resolves with them).
      const run = await startRun(
        deps,
        create(StartRunRequestSchema, {
          actor: req.actor,
          projectId: req.projectId,
          environment: found.run.environment_id,
          selection: { case: "testCaseIds", value: { ids: testCaseIds } },
          name: rerunName(found.run.name, req.failedOnly),
        }),
        context.signal,
      );
      return { run };
    },

    async claimTest(req, ctx) {
      requireExecutor(ctx);
      const executorId = [...req.executorId];
      if (executorId.length < 1 || executorId.length > 200)
        throw invalid("executor_id must be 1 to 200 characters");
      const outcome = await leases.claim(req.testResultId, req.executorId);
      if (outcome.kind === "gave_up") {
        await events.changed(outcome.runId);
        await follow(outcome.effects);
      }
      if (outcome.kind !== "claimed") throw refusal(claimRefusals, outcome);
      const { run, test } = outcome;
      await events.changed(run.id);
      return {
        assignment: create(TestAssignmentSchema, {
          testResultId: test.id,
          runId: run.id,
          projectId: run.project_id,
          testCaseId: test.test_case_id,
          name: test.name,
          environmentId: run.environment_id,
          baseUrl: run.environment_base_url,
          steps: test.steps.map((step) => fromJson(StepSchema, step as JsonValue)),
          attempt: test.attempt,
          maxAttempts: deps.maxAttempts,
          leaseToken: test.lease_token ?? "",
          leaseExpiresAt: timestampFromDate(dbDate(test.lease_expires_at ?? new Date())),
          variablesGrant: deps.variablesGrants.issue(
            { projectId: run.project_id, testResultId: test.id },
            variablesGrantMs,
          ),
        }),
      };
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
      // Nothing to publish: the claim was handed back before, and the run did not change now.
      const runId = effects.publish?.[0]?.runId;
      if (runId) await events.changed(runId);
      await follow(effects);
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
      const done = await leases.complete(req.testResultId, req.leaseToken, {
        status,
        summary: req.summary,
        durationMs: Number(req.durationMs),
        failedStep: req.failedStep,
      });
      if (done.kind !== "completed") throw refusal(completeRefusals, done);
      await events.changed(done.run.id);
      await follow(done.effects);
      return {
        test: renderTest(done.test, done.run.project_id, links),
        runStatus: toRunStatus(done.run.status),
        runFinished: done.run.finished_at !== null,
      };
    },

    async skipRun(req, ctx) {
      requireExecutor(ctx);
      if (req.reason !== SkipReason.ENVIRONMENT_UNREACHABLE)
        throw invalid("reason must be ENVIRONMENT_UNREACHABLE");
      requireSummary(req.summary);
      const skipped = await leases.skipRun(req.runId, req.testResultId, req.leaseToken, req.summary);
      if (skipped.kind !== "skipped") throw refusal(skipRunRefusals, skipped);
      await events.changed(req.runId);
      await follow(skipped.effects);
      return { run: renderRun(skipped.result.run, skipped.result.tests, links) };
    },
  };
}
