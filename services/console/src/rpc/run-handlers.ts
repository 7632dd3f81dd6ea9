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
import { digestOf } from "../auth/credentials.js";
import { sessionCookieKey, type Viewers } from "../viewer.js";
import { nameOrNothing, relay, relayed } from "./relay.js";
import type { StreamSlots } from "./stream-slots.js";

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
  /** The bounds on live streams per session and per project (this replica's). */
  streams: StreamSlots;
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

const maxRunName = 200;
/** A selection of test cases holds at most 500 (docs/rest-api.md), as ListTestCases reads at once. */
const maxSelectedCases = 500;

/**
 * What the console names a run of chosen test cases when the member gives no name: after the first
 * case, "Login" or "Login + 2 more", the first name cut (ending with "…") so the whole fits the run
 * name's 200 characters. The REST API keeps "N test cases" (docs/rest-api.md); see docs/console.md.
 */
export function chosenCasesRunName(names: readonly string[]): string {
  const [first = "", ...rest] = names;
  const more = rest.length > 0 ? ` + ${rest.length} more` : "";
  const room = maxRunName - more.length;
  const characters = [...first];
  const cut = characters.length <= room ? first : `${characters.slice(0, room - 1).join("")}…`;
  return cut + more;
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

  /**
   * The console's name for a run of these test cases, their names read in one call; empty when the
   * selection is empty, past the 500 bound or names a case not found: RunsService.StartRun then
   * refuses it, saying why, as for a named run.
   */
  const chosenCasesName = async (actor: Actor, projectId: string, ids: readonly string[]) => {
    const distinct = [...new Set(ids)];
    if (distinct.length === 0 || distinct.length > maxSelectedCases) return "";
    const { testCases } = await relay(catalog.listTestCases({ actor, projectId, testCaseIds: distinct }));
    const byId = new Map(testCases.map((c) => [c.id, c.name]));
    const names = distinct.map((id) => byId.get(id));
    return names.every((n) => n !== undefined) ? chosenCasesRunName(names) : "";
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
      // A session was found for the cookie above, so it is there.
      const slot = deps.streams.acquire(digestOf(ctx.values.get(sessionCookieKey) ?? ""), req.projectId);
      // Freed as soon as the browser's call ends, even while this generator waits at a `yield` for
      // a write the browser never reads (http/write-stall.ts then ends the response): the finally
      // below runs only once the generator is resumed.
      ctx.signal.addEventListener("abort", slot.release, { once: true });
      const window = AbortSignal.any([ctx.signal, AbortSignal.timeout(deps.watchWindowMs), slot.signal]);
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
        // The session ended (member removed, Sign out everywhere): the page goes to sign-in.
        if (slot.signal.aborted) throw new ConnectError("the session ended", Code.Unauthenticated);
        // The window closed: end the stream cleanly, the browser calls again.
        if (window.aborted && !ctx.signal.aborted) return;
        throw relayed(error);
      } finally {
        slot.release();
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
        defaultRunName:
          selection.case === "testCaseIds"
            ? chosenCasesRunName(resolved.testCases.map((c) => c.name))
            : resolved.defaultRunName,
      };
    },

    async startRun(req, ctx) {
      const { actor } = await viewers.actorForProject(ctx, req.projectId);
      const selection = selectionOf(req.selection);
      const name =
        req.name ||
        (selection.case === "testCaseIds"
          ? await chosenCasesName(actor, req.projectId, selection.value.ids)
          : "");
      const request = {
        actor,
        projectId: req.projectId,
        ...(req.environmentId && { environment: req.environmentId }),
        selection,
        ...(name && { name }),
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
