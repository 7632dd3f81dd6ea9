import { create } from "@bufbuild/protobuf";
import { type Client, Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import {
  type ConsoleService,
  type RunDetails,
  RunDetailsSchema,
  type RunSelection,
} from "@testrun/gen/testrun/console/v1/console_pb";
import type { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import {
  type Run,
  RunStartedSchema,
  type RunsService,
  WatchMode,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { Viewers } from "../viewer.js";
import { nameOrNothing, relay, relayed } from "./relay.js";

export interface RunHandlerDeps {
  viewers: Viewers;
  catalog: Client<typeof CatalogService>;
  keys: Client<typeof KeysService>;
  runs: Client<typeof RunsService>;
  billing: Client<typeof BillingService>;
  /**
   * A WatchRun stream ends after this long even while its run goes on, and the browser calls
   * again: proxies' idle timeouts (60 s at most ingresses) never cut it, and the session and
   * membership are checked again on every call.
   */
  watchWindowMs: number;
}

type Actor = Awaited<ReturnType<Viewers["actorForProject"]>>["actor"];

/** The console's RunSelection as the oneof of RunsService.StartRun and CatalogService.ResolveRunSelection. */
function selectionOf(selection: RunSelection | undefined) {
  const chosen = selection?.selection;
  switch (chosen?.case) {
    case "testPlanId":
      return { case: "testPlan" as const, value: chosen.value };
    case "testCaseIds":
    case "tags":
      return chosen;
    default:
      throw new ConnectError("choose a test plan, tags or test cases", Code.InvalidArgument);
  }
}

/** ConsoleService's runs methods: RunsService decides, with the signed-in member as actor. */
export function runHandlers(
  deps: RunHandlerDeps,
): Pick<
  ServiceImpl<typeof ConsoleService>,
  "listRuns" | "getRun" | "watchRun" | "getTestResult" | "previewRun" | "startRun" | "cancelRun"
> {
  const { viewers, catalog, keys, runs, billing } = deps;

  /** The names a run page shows beside the run's ids, read once per page load or stream. */
  const detailsOf = async (actor: Actor, run: Run): Promise<RunDetails> => {
    const { projectId } = run;
    const [environmentName, testPlanName, startedByMemberName, startedByKeyName] = await Promise.all([
      nameOrNothing(
        catalog
          .getEnvironment({ actor, projectId, environmentId: run.environmentId })
          .then((r) => r.environment?.name),
      ),
      run.testPlanId
        ? nameOrNothing(
            catalog
              .getTestPlan({ actor, projectId, testPlanId: run.testPlanId })
              .then((r) => r.testPlan?.name),
          )
        : "",
      run.startedByMemberId
        ? nameOrNothing(
            catalog.getMember({ actor, memberId: run.startedByMemberId }).then((r) => r.member?.displayName),
          )
        : "",
      // A revoked key is no longer listed: the page then shows its id.
      run.startedByKeyId
        ? nameOrNothing(
            keys
              .listKeys({ actor, projectId })
              .then((r) => r.keys.find((k) => k.id === run.startedByKeyId)?.name),
          )
        : "",
    ]);
    return create(RunDetailsSchema, {
      run,
      environmentName,
      testPlanName,
      startedByMemberName,
      startedByKeyName,
    });
  };

  return {
    async listRuns(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const listed = await relay(
        runs.listRuns({
          actor,
          projectId: req.projectId,
          limit: req.pageSize,
          statuses: req.statuses,
          testPlanId: req.testPlanId,
          environmentId: req.environmentId,
          pageToken: req.pageToken,
        }),
      );
      return { runs: listed.runs, nextPageToken: listed.nextPageToken };
    },

    async getRun(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { run } = await relay(runs.getRun({ actor, projectId: req.projectId, runId: req.runId }));
      return { run: run && (await detailsOf(actor, run)) };
    },

    async *watchRun(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const window = AbortSignal.any([ctx.signal, AbortSignal.timeout(deps.watchWindowMs)]);
      let names: Omit<RunDetails, "run"> | undefined;
      try {
        const stream = runs.watchRun(
          {
            actor,
            projectId: req.projectId,
            runId: req.runId,
            // A page that applies changes gets only what changed after the first message.
            mode: req.changes ? WatchMode.CHANGES : WatchMode.UNSPECIFIED,
          },
          // No deadline of its own: the stream lasts as long as the window (or the run).
          { signal: window, timeoutMs: 0 },
        );
        for await (const { run, change, sinceVersion } of stream) {
          if (change) {
            yield { change, sinceVersion };
            continue;
          }
          if (!run) continue;
          names ??= await detailsOf(actor, run);
          yield { run: { ...names, run } };
        }
      } catch (error) {
        // The window closed: end the stream cleanly, the browser calls again.
        if (window.aborted && !ctx.signal.aborted) return;
        throw relayed(error);
      }
    },

    async getTestResult(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const ids = { actor, projectId: req.projectId, runId: req.runId };
      const [{ run }, found] = await Promise.all([
        relay(runs.getRun(ids)),
        relay(runs.getTestResult({ ...ids, testResultId: req.testResultId })),
      ]);
      return {
        run: run && (await detailsOf(actor, run)),
        test: found.test,
        steps: found.steps,
        maxAttempts: found.maxAttempts,
      };
    },

    async previewRun(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const selection = selectionOf(req.selection);
      const [resolved, { balance }] = await Promise.all([
        relay(
          catalog.resolveRunSelection({
            actor,
            projectId: req.projectId,
            ...(req.environmentId && { environment: req.environmentId }),
            selection,
          }),
        ),
        relay(billing.getBalance({ actor, projectId: req.projectId })),
      ]);
      return {
        testCount: resolved.testCases.length,
        balance,
        environment: resolved.environment,
        defaultRunName: resolved.defaultRunName,
      };
    },

    async startRun(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const request = {
        actor,
        projectId: req.projectId,
        ...(req.environmentId && { environment: req.environmentId }),
        selection: selectionOf(req.selection),
        ...(req.name && { name: req.name }),
      };
      try {
        return { run: (await runs.startRun(request)).run };
      } catch (error) {
        // Started and charged, but not read back: show that run; never let the browser start again.
        const [started] = ConnectError.from(error).findDetails(RunStartedSchema);
        if (!started) throw relayed(error);
        try {
          return { run: (await runs.getRun({ actor, projectId: req.projectId, runId: started.runId })).run };
        } catch {
          throw new ConnectError(
            `the run ${started.runId} started but cannot be shown yet; do not start it again, find it in the runs list`,
            Code.Unavailable,
          );
        }
      }
    },

    async cancelRun(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const { run } = await relay(runs.cancelRun({ actor, projectId: req.projectId, runId: req.runId }));
      return { run };
    },
  };
}
