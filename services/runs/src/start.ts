import { toJson } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { PlaywrightSpecSchema } from "@testrun/gen/testrun/catalog/v1/playwright_pb";
import { StepSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
import { type Run, RunStartedSchema, type StartRunRequest } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { newId, requireAccess, requireActor } from "@testrun/kit";
import type { TestStepSnapshot } from "./db/entities.js";
import type { StartDeps } from "./deps.js";
import { kindOfTest } from "./dispatcher.js";
import { invalid, passOn } from "./errors.js";
import { renderRun } from "./render.js";
import type { RunWithTests } from "./rows.js";
import type { NewRun } from "./store/starts.js";

const maxNameLength = 200;
const maxIdempotencyKeyLength = 200;
/** The most retries a test may have (docs/rest-api.md, "Attempts, retries and causes"). */
const maxRetries = 3;

const keyInProgress = () =>
  new ConnectError("a start with this idempotency_key is in progress; retry later", Code.Aborted);

const isUniqueViolation = (error: unknown): boolean =>
  (error as { code?: string }).code === "23505" ||
  /unique constraint/i.test(String((error as Error).message));

/**
 * The run a start with this key already made (StartRunRequest.idempotency_key): the run itself
 * once charged, ABORTED while that start is still in progress, undefined when there was none.
 */
async function startedWithKey(deps: StartDeps, projectId: string, key: string): Promise<Run | undefined> {
  const earlier = await deps.starts.findByIdempotencyKey(projectId, key);
  if (!earlier) return undefined;
  if (earlier.chargeState !== "charged") throw keyInProgress();
  const found = await deps.reads.getRun(projectId, earlier.id);
  if (!found) throw keyInProgress();
  return renderRun(found.run, found.tests, deps.links);
}

const startedBy = (actor: Actor) => {
  switch (actor.kind.case) {
    case "apiKey":
      return { startedByKeyId: actor.kind.value.keyId, startedByMemberId: actor.kind.value.creatorMemberId };
    case "memberId":
      return { startedByKeyId: null, startedByMemberId: actor.kind.value };
    default:
      return { startedByKeyId: null, startedByMemberId: null };
  }
};

/**
 * The most tests one run holds (docs/runs.md, "Bounded work per run"), chosen from `make bench`'s
 * growth table: watching costs per change since runs carry versions, but a run's first read, its
 * start and each completion's tally still grow with its size.
 */
export const maxTestsPerRun = 500;

/**
 * StartRun. The order makes every crash recoverable: the run and its tests are stored first,
 * hidden as `pending`; then billing charges (idempotent by run id); then the run becomes
 * `charged` (visible) and its tests are published. A failure after the charge undoes the start
 * and refunds; a crash in between leaves a pending row that the reconciler refunds and removes.
 *
 * `callerGone` aborts when the caller stops waiting (its deadline, or it hung up). Until the run
 * is confirmed that undoes the start: a caller that got an error without a run id must be able
 * to post again without paying twice.
 */
export async function startRun(deps: StartDeps, req: StartRunRequest, callerGone: AbortSignal): Promise<Run> {
  requireActor(req.actor);
  const actor = req.actor as Actor;
  const requestedName = req.name ?? "";
  if ([...requestedName].length > maxNameLength)
    throw invalid(`name must be at most ${maxNameLength} characters`);
  if (req.retries !== undefined && (req.retries < 0 || req.retries > maxRetries))
    throw invalid(`retries must be 0 to ${maxRetries}`);
  const idempotencyKey = req.idempotencyKey || null;
  if (idempotencyKey !== null) {
    if (actor.kind.case === "apiKey")
      throw invalid("idempotency_key is for services starting runs, not API keys");
    if ([...idempotencyKey].length > maxIdempotencyKeyLength)
      throw invalid(`idempotency_key must be at most ${maxIdempotencyKeyLength} characters`);
    // A repeat hands back a run: only to whoever may start one in the project (the start below
    // is authorized by the catalog's resolution, which a repeat never reaches).
    await requireAccess(deps.catalog, actor, req.projectId, Permission.START_RUN);
    const earlier = await startedWithKey(deps, req.projectId, idempotencyKey);
    if (earlier) return earlier;
  }

  const resolved = await deps.catalog
    .resolveRunSelection(
      {
        actor,
        projectId: req.projectId,
        environment: req.environment,
        selection: req.selection,
      },
      { signal: callerGone },
    )
    .catch((error: unknown) => {
      throw passOn(error);
    });
  const environment = resolved.environment;
  if (!environment || resolved.testCases.length === 0)
    throw new ConnectError("the catalog resolved no environment or no test case", Code.Internal);
  // Every selection stops at this bound in the catalog already (tags, ids, a plan's cases); a run
  // beyond it is never stored, whatever resolved it.
  if (resolved.testCases.length > maxTestsPerRun)
    throw invalid(
      `a run holds at most ${maxTestsPerRun} tests; the selection has ${resolved.testCases.length}`,
    );

  const run: NewRun = {
    id: newId("run"),
    projectId: req.projectId,
    environmentId: environment.id,
    environmentBaseUrl: environment.baseUrl.replace(/\/+$/, ""),
    testPlanId: resolved.testPlanId ?? null,
    name: requestedName || resolved.defaultRunName,
    ...startedBy(actor),
    recordTraces: req.recordTraces,
    idempotencyKey,
    variableNames: resolved.variableNames,
    tests: resolved.testCases.map((tc) => ({
      id: newId("tr"),
      testCaseId: tc.testCaseId,
      testCaseVersion: tc.version,
      name: tc.name,
      steps: tc.steps.map((step) => toJson(StepSchema, step) as TestStepSnapshot),
      playwright: tc.playwright
        ? (toJson(PlaywrightSpecSchema, tc.playwright) as Record<string, unknown>)
        : null,
      recordTrace: tc.recordTrace,
      // The run request's, else the plan's or the case's (the catalog resolved which).
      retries: req.retries ?? Math.min(Math.max(tc.retries, 0), maxRetries),
    })),
  };
  const amount = run.tests.length;
  try {
    await deps.starts.insertPending(run);
  } catch (error) {
    // Another start with the same key got its row in first (its caller retried while it ran).
    if (idempotencyKey === null || !isUniqueViolation(error)) throw error;
    const earlier = await startedWithKey(deps, req.projectId, idempotencyKey);
    if (earlier) return earlier;
    throw keyInProgress();
  }

  try {
    await deps.billing.chargeRun(
      { projectId: run.projectId, runId: run.id, amount: BigInt(amount) },
      { signal: callerGone },
    );
    // Charged, but the caller stopped waiting meanwhile: it will not learn the run's id, so the
    // run must not start. From the confirmation on only local steps remain (publication never
    // waits longer than a Redis command timeout, the read-back is one query), within its deadline.
    callerGone.throwIfAborted();
  } catch (error) {
    const e = ConnectError.from(error);
    if (e.code === Code.FailedPrecondition) {
      // Not enough credits: nothing was charged, so nothing of the run may remain. Should the
      // delete fail, the reconciler removes the pending row; the caller still learns why.
      await deps.starts
        .deleteUnstarted(run.id)
        .catch((err: unknown) =>
          deps.logger.warn({ err, runId: run.id }, "could not remove a refused start"),
        );
      throw passOn(e);
    }
    // The charge may or may not have landed (a timeout, the caller gone), or billing refused it
    // because the reconciler gave this start up meanwhile (ABORTED): undo whichever it was.
    await deps.credits.undoStart(run.id, run.projectId, amount);
    deps.logger.warn({ err: e, runId: run.id }, "start undone before its confirmation");
    if (callerGone.aborted)
      throw new ConnectError("the caller stopped waiting; nothing was started", Code.DeadlineExceeded);
    throw new ConnectError("could not charge the run; nothing was started", Code.Unavailable);
  }

  let charged = false;
  try {
    charged = await deps.starts.markCharged(run.id);
  } catch (err) {
    deps.logger.warn({ err, runId: run.id }, "could not mark the run charged");
  }
  if (!charged && (await deps.credits.undoStart(run.id, run.projectId, amount)) !== "started") {
    throw new ConnectError("the run could not be started; its credits were given back", Code.Unavailable);
  }
  // The one line a start leaves at info (its calls log at debug); the run's end is logged once too
  // (finished.ts). A repeat with the same idempotency key returned above, before it.
  deps.logger.info(
    {
      runId: run.id,
      projectId: run.projectId,
      tests: amount,
      ...(run.testPlanId && { testPlanId: run.testPlanId }),
      environmentId: run.environmentId,
      ...(run.startedByKeyId ? { keyId: run.startedByKeyId } : { memberId: run.startedByMemberId }),
    },
    "run started",
  );

  // Read back before publishing: the answer shows the run as it starts (every test QUEUED), not
  // as executors may already have moved it a moment later. (Its own statement, not part of the
  // one above: a run charged but unreadable is answered as such, with its id.)
  let readBack: RunWithTests | undefined;
  let readError: unknown = new Error("started run not found on read-back");
  try {
    readBack = await deps.reads.getRun(run.projectId, run.id);
  } catch (err) {
    readError = err;
  }
  // Marked published already when this start's own statement made the run visible.
  await deps.dispatcher.publish(
    run.tests.map((t) => ({
      testResultId: t.id,
      runId: run.id,
      projectId: run.projectId,
      kind: kindOfTest(t),
    })),
    { marked: charged },
  );
  if (readBack) return renderRun(readBack.run, readBack.tests, deps.links);
  // Started and charged: the caller must follow this run, not start another.
  deps.logger.error({ err: readError, runId: run.id }, "run started but could not be read back");
  throw new ConnectError(
    "the run was started but could not be read back; follow it with GetRun",
    Code.Internal,
    undefined,
    [{ desc: RunStartedSchema, value: { runId: run.id, url: deps.links.run(run.projectId, run.id) } }],
  );
}
