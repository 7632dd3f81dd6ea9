// GET /v1/test-cases/{id}/history (docs/rest-api.md, "Test health and quarantine"): the runs
// service's GetTestCaseHistory in the API's conventions, with the environment named as POST
// /v1/runs names it and a case of another project refused as not found.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Environment } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import {
  type GetTestCaseHistoryResponse,
  type HistoryEntry,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import { caseHealthJson, causeOf, rfc3339 } from "@testrun/kit/run-json";
import type { z } from "zod";
import type { historyAnswerSchema, historyEntrySchema } from "./api/health-schemas.js";
import { callOptions, type GatewayContext } from "./context.js";
import { HttpError } from "./http-error.js";
import { actorOf, keyOf, rpc, type V1Deps } from "./routes/deps.js";

type Entry = z.output<typeof historyEntrySchema>;

const startedBy = (entry: HistoryEntry): Entry["startedBy"] => {
  if (entry.startedByKeyId) return { kind: "key", id: entry.startedByKeyId };
  if (entry.startedByMemberId) return { kind: "member", id: entry.startedByMemberId };
  if (entry.startedByScheduleId) return { kind: "schedule", id: entry.startedByScheduleId };
  return { kind: "unknown", id: null };
};

/** A history entry's status: the final ones only (a history holds finished results). */
const finalStatus = (status: TestStatus): Entry["status"] =>
  status === TestStatus.FAILED ? "FAILED" : status === TestStatus.SKIPPED ? "SKIPPED" : "PASSED";

export const historyEntryJson = (entry: HistoryEntry): Entry => ({
  testResultId: entry.testResultId,
  runId: entry.runId,
  runName: entry.runName,
  environmentId: entry.environmentId,
  testPlanId: entry.testPlanId ?? null,
  caseVersion: entry.caseVersion,
  status: finalStatus(entry.status),
  flaky: entry.flaky,
  cause: entry.status === TestStatus.FAILED ? causeOf(entry.cause) : null,
  durationMs: entry.durationMs === undefined ? null : Number(entry.durationMs),
  summary: entry.summary,
  finishedAt: rfc3339(entry.finishedAt),
  attempts: entry.attempts,
  startedBy: startedBy(entry),
  quarantined: entry.quarantined,
  url: entry.url,
});

export const historyJson = (response: GetTestCaseHistoryResponse): z.output<typeof historyAnswerSchema> => ({
  entries: response.entries.map(historyEntryJson),
  nextCursor: response.nextCursor || null,
  health: response.health.map(caseHealthJson),
});

/**
 * The environment `value` names in the key's project, as the catalog resolves POST /v1/runs'
 * `environment`: the one with that id, else the one with that name ignoring case; none is 404,
 * several names 409 ambiguous_name with their ids.
 */
export function pickEnvironment(environments: readonly Environment[], value: string): Environment {
  const byId = environments.find((environment) => environment.id === value);
  if (byId) return byId;
  const named = environments.filter((environment) => environment.name.toLowerCase() === value.toLowerCase());
  const [only] = named;
  if (!only)
    throw new HttpError(404, "not_found", `no environment with the id or name "${value}" in this project`);
  if (named.length > 1)
    throw new HttpError(
      409,
      "ambiguous_name",
      `the environment name "${value}" matches ${named.length} items; pass one of their ids instead`,
      { candidates: named.map((environment) => environment.id) },
    );
  return only;
}

export interface HistoryQuery {
  environment?: string | undefined;
  limit?: string | undefined;
  cursor?: string | undefined;
}

/** Reads a page of a case's history for the request's key. */
export async function readHistory(
  ctx: GatewayContext,
  deps: Pick<V1Deps, "catalog" | "runs">,
  testCaseId: string,
  query: HistoryQuery,
): Promise<GetTestCaseHistoryResponse> {
  const actor = actorOf(ctx);
  const projectId = keyOf(ctx).projectId;
  let environmentId: string | undefined;
  if (query.environment) {
    const { environments } = await rpc(ctx, () =>
      deps.catalog.listEnvironments({ actor, projectId }, callOptions(ctx)),
    );
    environmentId = pickEnvironment(environments, query.environment).id;
  }
  const response = await rpc(ctx, () =>
    deps.runs.getTestCaseHistory(
      {
        actor,
        projectId,
        testCaseId,
        ...(environmentId && { environmentId }),
        limit: query.limit === undefined ? 50 : Number(query.limit),
        cursor: query.cursor ?? "",
      },
      callOptions(ctx),
    ),
  );
  // The runs service answers an empty history for any id (it keeps results, not cases): an empty
  // first page asks the catalog whether the case is the project's, so another project's is a 404.
  // A case deleted since keeps the history it has.
  if (response.entries.length === 0 && response.health.length === 0 && !query.cursor)
    await requireTestCase(ctx, deps, testCaseId);
  return response;
}

async function requireTestCase(ctx: GatewayContext, deps: Pick<V1Deps, "catalog">, testCaseId: string) {
  try {
    await deps.catalog.getTestCase(
      { actor: actorOf(ctx), projectId: keyOf(ctx).projectId, testCaseId },
      callOptions(ctx),
    );
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.NotFound)
      throw new HttpError(404, "not_found", "no such test case in this project");
    await rpc(ctx, () => Promise.reject(error));
  }
}
