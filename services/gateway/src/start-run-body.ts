import { HttpError } from "./http-error.js";

/** The start-run body of POST /v1/runs, checked, in the shape StartRunRequest takes. */
export interface StartRun {
  environment?: string;
  selection:
    | { case: "testPlan"; value: string }
    | { case: "testCaseIds"; value: { ids: string[] } }
    | { case: "tags"; value: { tags: string[] } };
  name?: string;
}

const fields = ["environment", "testPlan", "testCaseIds", "tags", "name"] as const;
const selections = ["testPlan", "testCaseIds", "tags"] as const;
const maxNameLength = 200;
const maxListLength = 500;

const invalid = (message: string) => new HttpError(400, "invalid_request", message);

/** A field given as null counts as not given, as it does for the selections. */
function text(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw invalid(`${field} must be a string`);
  return value;
}

function textList(body: Record<string, unknown>, field: string): string[] {
  const value = body[field];
  if (!Array.isArray(value) || value.some((item) => typeof item !== "string" || item.length === 0)) {
    throw invalid(`${field} must be an array of non-empty strings`);
  }
  if (value.length === 0) throw invalid(`${field} is empty: nothing to run`);
  // Duplicates count once (decisions.md: "duplicates once, at most 500").
  if (new Set(value).size > maxListLength)
    throw invalid(`${field} may hold at most ${maxListLength} distinct entries`);
  return value as string[];
}

/**
 * Checks a start-run body (rest-api-v1.md §4.1, decisions.md): exactly one of testPlan,
 * testCaseIds, tags; unknown fields are refused by name, so a typo such as `testplan` is not
 * silently ignored; a name of at most 200 characters.
 */
export function parseStartRunBody(body: Record<string, unknown>): StartRun {
  const unknown = Object.keys(body).find((key) => !(fields as readonly string[]).includes(key));
  if (unknown !== undefined) {
    throw invalid(`unknown field "${unknown}"; accepted: ${fields.join(", ")}`);
  }
  const given = selections.filter((field) => body[field] !== undefined && body[field] !== null);
  if (given.length !== 1) {
    throw invalid(
      given.length === 0
        ? "give exactly one of testPlan, testCaseIds, tags: none was given"
        : `give exactly one of testPlan, testCaseIds, tags: got ${given.join(", ")}`,
    );
  }
  const name = text(body, "name");
  if (name !== undefined && [...name].length > maxNameLength) {
    throw invalid(`name may be at most ${maxNameLength} characters`);
  }
  const environment = text(body, "environment");
  const selection: StartRun["selection"] =
    given[0] === "testPlan"
      ? { case: "testPlan", value: nonEmpty(text(body, "testPlan"), "testPlan") }
      : given[0] === "testCaseIds"
        ? { case: "testCaseIds", value: { ids: textList(body, "testCaseIds") } }
        : { case: "tags", value: { tags: textList(body, "tags") } };
  return {
    selection,
    ...(environment !== undefined && environment !== "" && { environment }),
    ...(name !== undefined && name !== "" && { name }),
  };
}

function nonEmpty(value: string | undefined, field: string): string {
  if (!value) throw invalid(`${field} must not be empty`);
  return value;
}

/** GET /v1/runs?limit: default 20, larger than 100 gives 100, not a whole number of at least 1 gives 400. */
export function parseRunsLimit(raw: string | string[] | undefined): number {
  if (raw === undefined) return 20;
  if (Array.isArray(raw) || !/^[0-9]+$/.test(raw) || Number(raw) < 1) {
    throw invalid("limit must be a whole number of at least 1");
  }
  return Math.min(Number(raw), 100);
}
