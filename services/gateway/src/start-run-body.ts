import type { z } from "zod";
import { limitParam, startRunBodySchema } from "./api/schemas.js";
import { firstProblem } from "./api/validate.js";
import { HttpError } from "./http-error.js";

/** The start-run body of POST /v1/runs, checked, in the shape StartRunRequest takes. */
export interface StartRun {
  environment?: string;
  selection:
    | { case: "testPlan"; value: string }
    | { case: "testCaseIds"; value: { ids: string[] } }
    | { case: "tags"; value: { tags: string[] } };
  name?: string;
  recordTraces?: boolean;
  /** StartRunRequest.retries: unset leaves the plan's, else each test case's. */
  retries?: number;
}

/**
 * A validated start-run body (api/schemas.ts: exactly one of testPlan, testCaseIds, tags; unknown
 * fields refused by name; a name of at most 200 characters) in the shape StartRunRequest takes.
 * null and empty strings count as not given.
 */
export function toStartRun(body: z.output<typeof startRunBodySchema>): StartRun {
  const selection: StartRun["selection"] = body.testPlan
    ? { case: "testPlan", value: body.testPlan }
    : body.testCaseIds
      ? { case: "testCaseIds", value: { ids: [...new Set(body.testCaseIds)] } }
      : { case: "tags", value: { tags: [...new Set(body.tags ?? [])] } };
  return {
    selection,
    ...(body.environment && { environment: body.environment }),
    ...(body.name && { name: body.name }),
    ...(body.recordTraces && { recordTraces: true }),
    ...(typeof body.retries === "number" && { retries: body.retries }),
  };
}

/** Checks a start-run body (docs/rest-api.md, "Starting a run"); a refusal is a 400 saying why. */
export function parseStartRunBody(body: Record<string, unknown>): StartRun {
  const result = startRunBodySchema.safeParse(body);
  if (!result.success)
    throw new HttpError(400, "invalid_request", firstProblem(result.error, startRunBodySchema));
  return toStartRun(result.data);
}

/** GET /v1/runs?limit: default 20, larger than 100 gives 100, not a whole number of at least 1 gives 400. */
export function parseRunsLimit(raw: string | string[] | undefined): number {
  const result = limitParam.safeParse(raw);
  if (!result.success) throw new HttpError(400, "invalid_request", result.error.issues[0]?.message ?? "");
  return runsLimit(result.data);
}

/** The number of runs a valid `limit` asks for. */
export const runsLimit = (limit: string | undefined): number =>
  limit === undefined ? 20 : Math.min(Number(limit), 100);
