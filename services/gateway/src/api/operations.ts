import "zod-openapi";
import { z } from "zod";
import {
  contentDocumentSchema,
  dryRunParam,
  importAnswerSchema,
  violationsSchema,
} from "./content-import-schemas.js";
import {
  baseParam,
  comparisonSchema,
  cursorParam,
  failureGroupAnswerSchema,
  failureGroupIdParam,
  failureGroupsAnswerSchema,
  pageLimitParam,
  stateParam,
} from "./failure-schemas.js";
import {
  historyAnswerSchema,
  historyEnvironmentParam,
  quarantinesAnswerSchema,
  testCaseIdParam,
} from "./health-schemas.js";
import {
  artifactIdParam,
  cancelBodySchema,
  environmentsAnswerSchema,
  errors,
  idempotencyKeyHeader,
  limitParam,
  projectAnswerSchema,
  rerunBodySchema,
  runIdParam,
  runSchema,
  runsAnswerSchema,
  searchParam,
  startRunBodySchema,
  tagParam,
  testCasesAnswerSchema,
  testPlansAnswerSchema,
  testResultIdParam,
  waitParam,
} from "./schemas.js";

/**
 * Every operation of /v1: its path, what it takes (query, headers, body) and every answer it can
 * give (status, body, headers). The routes (routes/v1.ts) are registered from this table and
 * validate requests with its schemas (validate.ts); the OpenAPI document (openapi.ts) is generated
 * from it. docs/rest-api.md says the same in words.
 */

/** What a request must present: a key that may read, a key that may start runs, or nothing. */
export type Access = "read" | "start_run" | "none";

export interface ResponseDefinition {
  /** Registers the answer as a reusable component of the document. */
  id?: string;
  description: string;
  schema: z.ZodType;
  headers: z.ZodObject;
  /** The media types it answers in, all with `schema`; JSON unless given (an artifact's bytes). */
  contentTypes?: readonly string[];
}

export interface Operation {
  operationId: string;
  method: "get" | "post";
  /** OpenAPI form: /v1/runs/{id}. */
  path: string;
  summary: string;
  description: string;
  access: Access;
  /** The query parameters it accepts; any other gives 400 naming it. */
  query?: z.ZodObject;
  /** The headers it reads beside the key. */
  headers?: z.ZodObject;
  /** The JSON body; `required: false` takes a missing body as `{}`. */
  body?: { schema: z.ZodObject; required: boolean };
  pathParams?: z.ZodObject;
  responses: Record<number, ResponseDefinition>;
}

// ---------------------------------------------------------------- headers of answers

const requestId = z.string().meta({
  header: { id: "RequestId" },
  description:
    "Identifies this request in the service's logs: the client's own X-Request-Id when it sent a sane one (8 to 128 of A-Z a-z 0-9 . _ : -), else a new UUID.",
  examples: ["4b0f7c1e-2a3d-4e5f-8a9b-0c1d2e3f4a5b"],
});

const rateLimitHeaders = {
  "RateLimit-Limit": z
    .int()
    .min(1)
    .meta({
      header: { id: "RateLimitLimit" },
      description: "Requests the key may make per minute (60 unless configured otherwise).",
      examples: [60],
    }),
  "RateLimit-Remaining": z
    .int()
    .min(0)
    .meta({
      header: { id: "RateLimitRemaining" },
      description: "Requests left in the current window.",
      examples: [59],
    }),
  "RateLimit-Reset": z
    .int()
    .min(1)
    .meta({
      header: { id: "RateLimitReset" },
      description: "Seconds until the window ends and the count starts again.",
      examples: [60],
    }),
};

const retryAfter = z
  .int()
  .min(1)
  .meta({
    header: { id: "RetryAfter" },
    description: "Whole seconds to wait before trying again (at least 1).",
    examples: [17],
  });

const noStore = z.literal("no-store").meta({
  header: { id: "CacheControlNoStore" },
  description: "Answers are per key and change: nothing may cache them.",
});

/** Headers of an answer to a request whose key was accepted. */
const keyedHeaders = z.object({ "X-Request-Id": requestId, "Cache-Control": noStore, ...rateLimitHeaders });

/** Headers of the answer to a POST that started a run, or replayed one (Idempotency-Key). */
const startedHeaders = keyedHeaders.extend({
  "Idempotency-Replayed": z
    .literal("true")
    .optional()
    .meta({
      header: { id: "IdempotencyReplayed" },
      description:
        "Present when the answer is a replay: an earlier request with the same Idempotency-Key and body started this run (shown as it is now); nothing new was started or charged.",
    }),
});

/** Headers of an error answer: the rate headers appear only once the key was accepted. */
const errorHeaders = z.object({
  "X-Request-Id": requestId,
  "Cache-Control": noStore,
  "RateLimit-Limit": rateLimitHeaders["RateLimit-Limit"].optional().meta({
    header: { id: "RateLimitLimitIfKeyed" },
    description: "As RateLimit-Limit, once the key was accepted.",
  }),
  "RateLimit-Remaining": rateLimitHeaders["RateLimit-Remaining"].optional().meta({
    header: { id: "RateLimitRemainingIfKeyed" },
    description: "As RateLimit-Remaining, once the key was accepted.",
  }),
  "RateLimit-Reset": rateLimitHeaders["RateLimit-Reset"].optional().meta({
    header: { id: "RateLimitResetIfKeyed" },
    description: "As RateLimit-Reset, once the key was accepted.",
  }),
});

const answer = (
  description: string,
  schema: z.ZodType,
  headers: z.ZodObject = keyedHeaders,
): ResponseDefinition => ({
  description,
  schema,
  headers,
});

const failure = (
  description: string,
  schema: z.ZodType,
  headers: z.ZodObject = errorHeaders,
  id?: string,
): ResponseDefinition => ({ description, schema, headers, ...(id && { id }) });

/** The answers every keyed operation can give besides its own (components of the document). */
const common = {
  400: failure(
    "Invalid request: an unknown query parameter (named in the message), a bad parameter value, or different keys in Authorization and X-Api-Key.",
    errors.invalidRequest,
    errorHeaders,
    "InvalidRequest",
  ),
  401: failure(
    "No key, a malformed, unknown or revoked key (code unauthorized), or an expired key (code key_expired).",
    errors.unauthorized,
    errorHeaders,
    "Unauthorized",
  ),
  403: failure(
    "The key's creator is no longer an Editor or above: the key no longer works.",
    errors.forbidden,
    errorHeaders,
    "Forbidden",
  ),
  404: failure("Not found in the key's project.", errors.notFound, errorHeaders, "NotFound"),
  429: failure(
    "Over the key's rate limit (60 requests a minute unless configured otherwise), or too many failed authentications from this address.",
    errors.rateLimited,
    errorHeaders.extend({ "Retry-After": retryAfter }),
    "RateLimited",
  ),
  500: failure("A failure inside the service.", errors.internal, errorHeaders, "Internal"),
};
const keyedFailures = (): Record<number, ResponseDefinition> => ({ ...common });

const bodyFailures = (): Record<number, ResponseDefinition> => ({
  // Answered by the HTTP server itself (kit http-server.ts), with the headers already set.
  408: failure(
    "The request body did not arrive whole within 30 s of its headers (HTTP_BODY_TIMEOUT_SECONDS); the connection closes.",
    errors.requestTimeout,
    errorHeaders.extend({ Connection: z.literal("close") }),
  ),
  413: failure(
    "The request body is over 1 MiB.",
    errors.payloadTooLarge,
    errorHeaders.extend({ Connection: z.literal("close").optional() }),
  ),
});

const runPath = z.object({ id: runIdParam });

/**
 * The headers of an artifact's bytes: a file the test's page produced, served from the API's
 * origin, so nothing in it may ever run there (nosniff, a CSP that allows nothing and sandboxes
 * it, a download rather than a page), and a private cache may keep it (its bytes never change).
 */
const artifactHeaders = keyedHeaders.extend({
  "Cache-Control": z.literal("private, max-age=3600, immutable").meta({
    header: { id: "CacheControlArtifact" },
    description:
      "An artifact's bytes never change: the client may keep them for an hour; shared caches may not (they are per key).",
  }),
  "Content-Length": z.int().min(0).meta({ description: "The artifact's size." }),
  "Content-Disposition": z.string().meta({
    description:
      "attachment, with a file name made of the artifact's name (letters, digits, . _ -) and its extension.",
    examples: ['attachment; filename="failure.png"'],
  }),
  "X-Content-Type-Options": z
    .literal("nosniff")
    .meta({ description: "Only the declared Content-Type counts." }),
  "Content-Security-Policy": z.literal("default-src 'none'; frame-ancestors 'none'; sandbox").meta({
    description: "Opened in a browser, the file can load, run and frame nothing.",
  }),
});

/** What a POST that starts a run answers (POST /v1/runs, POST /v1/runs/{id}/rerun). */
function startResponses(invalid: string, notFound: string): Record<number, ResponseDefinition> {
  return {
    201: answer(
      "The new run, as GET /v1/runs/{id} shows it (or the replayed one).",
      runSchema,
      startedHeaders,
    ),
    ...keyedFailures(),
    400: failure(invalid, errors.invalidRequest),
    402: failure(
      "Not enough test-run credits: required is the number of tests, available the balance. Nothing was started.",
      errors.insufficientCredits,
    ),
    403: failure("The key's creator can no longer start runs.", errors.forbidden),
    404: failure(notFound, errors.notFound),
    409: failure(
      "A name matched several items (ambiguous_name: pass one of the candidates' ids), or another request with the same Idempotency-Key is still being answered (idempotency_key_in_use: retry in a moment).",
      z.union([errors.ambiguousName, errors.idempotencyKeyInUse]),
    ),
    ...bodyFailures(),
    422: failure(
      "The Idempotency-Key was used within 24 hours with another request: nothing was started.",
      errors.idempotencyKeyReused,
    ),
    500: failure(
      "A failure inside the service. With id and url the run was started but could not be read back: follow it, do not post again.",
      errors.runStartedInternal,
    ),
  };
}

// ---------------------------------------------------------------- the operations

export const operations = {
  getProject: {
    operationId: "getProject",
    method: "get",
    path: "/v1/project",
    summary: "The key's project, its environments and its test plans",
    description: "Environments and test plans are ordered by creation, oldest first.",
    access: "read",
    query: z.strictObject({}),
    responses: {
      200: answer("The project with its environments and test plans.", projectAnswerSchema),
      ...keyedFailures(),
    },
  },
  listEnvironments: {
    operationId: "listEnvironments",
    method: "get",
    path: "/v1/environments",
    summary: "The project's environments",
    description: "Oldest first.",
    access: "read",
    query: z.strictObject({}),
    responses: { 200: answer("The environments.", environmentsAnswerSchema), ...keyedFailures() },
  },
  listTestPlans: {
    operationId: "listTestPlans",
    method: "get",
    path: "/v1/test-plans",
    summary: "The project's test plans",
    description: "Oldest first.",
    access: "read",
    query: z.strictObject({}),
    responses: { 200: answer("The test plans.", testPlansAnswerSchema), ...keyedFailures() },
  },
  listTestCases: {
    operationId: "listTestCases",
    method: "get",
    path: "/v1/test-cases",
    summary: "The project's test cases, filtered by tags and a name search",
    description:
      "Oldest first, at most 500 (truncated says whether more matched). Disabled test cases are listed too. tag and search combine with AND.",
    access: "read",
    query: z.strictObject({ tag: tagParam, search: searchParam }),
    responses: { 200: answer("The test cases.", testCasesAnswerSchema), ...keyedFailures() },
  },
  startRun: {
    operationId: "startRun",
    method: "post",
    path: "/v1/runs",
    summary: "Start a run",
    description:
      "Starts a run of a test plan, of test cases, or of every enabled test case with any of some tags, on an environment. Each test costs one credit, taken at once. The new run is RUNNING with every test QUEUED. Without Idempotency-Key every request starts, and counts, a run of its own; with it, a retry answers with the run the first request started.",
    access: "start_run",
    query: z.strictObject({}),
    headers: z.strictObject({ "Idempotency-Key": idempotencyKeyHeader }),
    body: { schema: startRunBodySchema, required: true },
    responses: startResponses(
      "Invalid request: none or several of testPlan, testCaseIds, tags; a bad field; an unknown field (named); malformed JSON; nothing to run; more than 500 test cases; a malformed Idempotency-Key.",
      "No such environment, test plan or test case in this project.",
    ),
  },
  listRuns: {
    operationId: "listRuns",
    method: "get",
    path: "/v1/runs",
    summary: "The project's runs, newest first",
    description: "Each run without its tests, with environmentId, testPlanId and createdAt. At most 100.",
    access: "read",
    query: z.strictObject({ limit: limitParam }),
    responses: { 200: answer("The runs.", runsAnswerSchema), ...keyedFailures() },
  },
  getRun: {
    operationId: "getRun",
    method: "get",
    path: "/v1/runs/{id}",
    summary: "A run with its tests",
    description:
      "Poll until finished is true; every 15 seconds is the recommended interval. With ?wait=S (1 to 30) the answer comes as soon as the run is finished, or after S seconds with the run as it is then: one request of the rate limit however long it waits. A key may hold a bounded number of waits at once (10 unless configured otherwise), and a project's keys together a bounded number (50); beyond, or when the service follows as many runs as it can, 429 with Retry-After.",
    access: "read",
    pathParams: runPath,
    query: z.strictObject({ wait: waitParam }),
    responses: {
      200: answer("The run.", runSchema),
      ...keyedFailures(),
      404: failure("No such run in this project.", errors.notFound),
      429: failure(
        "Over the key's rate limit, over its or its project's concurrent waits (?wait), the service at its capacity of waits, or too many failed authentications from this address.",
        errors.rateLimited,
        errorHeaders.extend({ "Retry-After": retryAfter }),
      ),
    },
  },
  cancelRun: {
    operationId: "cancelRun",
    method: "post",
    path: "/v1/runs/{id}/cancel",
    summary: "Cancel a run",
    description:
      "Stops a run in progress: its tests not yet executed are not run and their credits are given back; a test being executed is discarded. The run ends SKIPPED with skipReason cancelled, unless some test had already passed or failed (then PASSED or FAILED by the usual rule). Takes no body (or an empty object).",
    access: "start_run",
    pathParams: runPath,
    query: z.strictObject({}),
    body: { schema: cancelBodySchema, required: false },
    responses: {
      200: answer("The run after cancellation.", runSchema),
      ...keyedFailures(),
      400: failure("Invalid request: a body that is not an empty JSON object.", errors.invalidRequest),
      403: failure("The key's creator can no longer start (or cancel) runs.", errors.forbidden),
      404: failure("No such run in this project.", errors.notFound),
      409: failure("The run is already finished: nothing changed.", errors.runFinished),
      ...bodyFailures(),
    },
  },
  rerunRun: {
    operationId: "rerunRun",
    method: "post",
    path: "/v1/runs/{id}/rerun",
    summary: "Run a run's tests again",
    description:
      'Starts a new run on the run\'s environment with the test cases of its tests that FAILED (failedOnly: true) or with all of them (the default), as they are now in the project, charged and answered as POST /v1/runs. It is named after the run: "<name> (rerun)" or "<name> (rerun of failed)". Idempotency-Key works as on POST /v1/runs.',
    access: "start_run",
    pathParams: runPath,
    query: z.strictObject({}),
    headers: z.strictObject({ "Idempotency-Key": idempotencyKeyHeader }),
    body: { schema: rerunBodySchema, required: false },
    responses: startResponses(
      "Invalid request: a bad body, a malformed Idempotency-Key, or nothing to rerun (failedOnly and no test failed).",
      "No such run in this project, or a test case of it was deleted since.",
    ),
  },
  getArtifact: {
    operationId: "getArtifact",
    method: "get",
    path: "/v1/runs/{runId}/tests/{testResultId}/artifacts/{artifactId}",
    summary: "An artifact's bytes",
    description:
      "The bytes of an artifact of a test result (a screenshot, a Playwright trace, the browser's log), as its url in the test result names them, with its content type. Only for a key of the run's project: any other key, an unknown id, and an artifact past the retention period (30 days unless configured otherwise) give 404.",
    access: "read",
    pathParams: z.object({ runId: runIdParam, testResultId: testResultIdParam, artifactId: artifactIdParam }),
    query: z.strictObject({}),
    responses: {
      200: {
        description: "The artifact's bytes, in its contentType.",
        schema: z.string().meta({ format: "binary", description: "The artifact's bytes." }),
        headers: artifactHeaders,
        contentTypes: ["image/png", "application/zip", "application/json"],
      },
      ...keyedFailures(),
      404: failure(
        "No such artifact for this key: another project's, unknown, not of that run and test, or past the retention period.",
        errors.notFound,
      ),
    },
  },
  getRunComparison: {
    operationId: "getRunComparison",
    method: "get",
    path: "/v1/runs/{id}/comparison",
    summary: "A run compared with a base run",
    description:
      "Per test case: newly_failing, fixed, still_failing (with the run its failures began in), flaky, new_test, removed_test or unchanged, the differences first; the case versions with the steps that differ, and what changed around the tests (the environment's base URL, the variables' names, the selection's cases). The base is the run named by base, else the latest finished run created before it on the same environment with the same test plan (for a run of no plan, the same name); baseRule says which, none when there is no base (every test is then new_test). A run still in progress is compared as it stands.",
    access: "read",
    pathParams: runPath,
    query: z.strictObject({ base: baseParam }),
    responses: {
      200: answer("The comparison.", comparisonSchema),
      ...keyedFailures(),
      400: failure("Invalid request: base is not a run id, or given more than once.", errors.invalidRequest),
      404: failure("No such run, or no such base run, in this project.", errors.notFound),
    },
  },
  listFailureGroups: {
    operationId: "listFailureGroups",
    method: "get",
    path: "/v1/failure-groups",
    summary: "The project's failure groups, by impact",
    description:
      "Failed attempts grouped by how they failed (docs/rest-api.md, Failure groups): the most test cases affected first, then the most occurrences, then the latest seen. Open and reopened groups unless state says otherwise. Paged: limit (1 to 100, default 50) and the cursor of the previous answer.",
    access: "read",
    query: z.strictObject({ state: stateParam, limit: pageLimitParam, cursor: cursorParam }),
    responses: {
      200: answer("A page of failure groups.", failureGroupsAnswerSchema),
      ...keyedFailures(),
      400: failure(
        "Invalid request: an unknown state, limit not from 1 to 100, or a cursor this API did not give.",
        errors.invalidRequest,
      ),
    },
  },
  getFailureGroup: {
    operationId: "getFailureGroup",
    method: "get",
    path: "/v1/failure-groups/{id}",
    summary: "A failure group with its occurrences and test cases",
    description:
      "The group, a page of its occurrences (newest first; limit 1 to 100, default 50, and the cursor of the previous answer) and its test cases (the most occurrences first, at most 500). The first occurrence (firstSeen) names the run it first appeared in.",
    access: "read",
    pathParams: z.object({ id: failureGroupIdParam }),
    query: z.strictObject({ limit: pageLimitParam, cursor: cursorParam }),
    responses: {
      200: answer("The failure group.", failureGroupAnswerSchema),
      ...keyedFailures(),
      400: failure(
        "Invalid request: limit not from 1 to 100, or a cursor this API did not give.",
        errors.invalidRequest,
      ),
      404: failure("No such failure group in this project.", errors.notFound),
    },
  },
  getTestCaseHistory: {
    operationId: "getTestCaseHistory",
    method: "get",
    path: "/v1/test-cases/{id}/history",
    summary: "A test case's results and its health",
    description:
      "The case's results, newest first (limit 1 to 100, default 50, and the cursor of the previous answer), each with its run, environment, case version, status, cause, duration and who started the run; and the case's health in each environment (docs/rest-api.md, Test health and quarantine): its state, failure and flip rates with their 95% Wilson intervals, where its failures began, durations, and a lasting quarantine. environment (an id or a name) keeps one environment. Results older than the project's history retention (default 90 days) are gone; the health's counts outlive them.",
    access: "read",
    pathParams: z.object({ id: testCaseIdParam }),
    query: z.strictObject({
      environment: historyEnvironmentParam,
      limit: pageLimitParam,
      cursor: cursorParam,
    }),
    responses: {
      200: answer("A page of the case's history, with its health.", historyAnswerSchema),
      ...keyedFailures(),
      400: failure(
        "Invalid request: limit not from 1 to 100, a cursor this API did not give, or a parameter given twice.",
        errors.invalidRequest,
      ),
      404: failure(
        "No such test case in this project, or no environment with that id or name.",
        errors.notFound,
      ),
      409: failure(
        "The environment name matched several environments (ambiguous_name): pass one of the candidates' ids.",
        errors.ambiguousName,
      ),
    },
  },
  listQuarantines: {
    operationId: "listQuarantines",
    method: "get",
    path: "/v1/quarantines",
    summary: "The project's test cases quarantined now",
    description:
      "Each quarantine lasting now (docs/rest-api.md, Test health and quarantine): its test case, reason, who started it and when, and when it expires. A failure of a quarantined case in a run started while it lasts does not fail the run. Members start and lift quarantines in the web console; keys only read them.",
    access: "read",
    query: z.strictObject({}),
    responses: {
      200: answer("The lasting quarantines.", quarantinesAnswerSchema),
      ...keyedFailures(),
    },
  },
  getOpenApi: {
    operationId: "getOpenApi",
    method: "get",
    path: "/v1/openapi.json",
    summary: "This document",
    description: "The OpenAPI 3.1 document of /v1. Needs no key and does not count against any rate limit.",
    access: "none",
    query: z.strictObject({}),
    responses: {
      200: answer(
        "The OpenAPI document.",
        z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) }),
        z.object({
          "X-Request-Id": requestId,
          "Cache-Control": z
            .string()
            .meta({ description: "It may be cached for an hour.", examples: ["public, max-age=3600"] }),
          ETag: z.string().meta({ description: "Changes when the document does." }),
        }),
      ),
      400: failure("An unknown query parameter.", errors.invalidRequest),
    },
  },
} satisfies Record<string, Operation>;

export type OperationName = keyof typeof operations;

/** The keyed answers but 404: the import names no item by id, so nothing it asks for can be missing. */
function withoutNotFound(): Record<number, ResponseDefinition> {
  const { 404: _notFound, ...rest } = keyedFailures();
  return rest;
}

/**
 * POST /v1/content/import: in the document, not in the table above, because its route
 * (routes/content-import.ts) registers itself: it takes a content token, never an API key, and
 * reads an 8 MiB document the table's validation does not. The document gives it the
 * contentToken security scheme (openapi.ts). `access` is "read" only to satisfy the type; the
 * document does not use it for this operation.
 */
export const contentImportOperation: Operation = {
  operationId: "importContent",
  method: "post",
  path: "/v1/content/import",
  summary: "Import the project's content (content token only)",
  description:
    "Creates and updates the token's project's test cases, test plans, environments and variables from a document in the content-file format, acting as the member who created the token with that member's rights now. Everything or nothing: a document with a wrong field imports nothing. With dryRun=true nothing changes and the answer says what would. Only a content token (trc_…) is accepted: an API key gives 401.",
  access: "read",
  query: z.strictObject({ dryRun: dryRunParam }),
  body: { schema: contentDocumentSchema, required: true },
  responses: {
    200: answer("What the import did, or for a dry run would do.", importAnswerSchema),
    ...withoutNotFound(),
    400: failure(
      "Nothing was imported: an unknown query parameter, dryRun not true or false, malformed JSON, or a wrong field of the document (each named in violations).",
      errors.invalidRequest.extend({ violations: violationsSchema.optional() }),
    ),
    401: failure(
      "No content token, an API key instead of one, a malformed, unknown or revoked token (code unauthorized), or an expired token (code key_expired).",
      errors.unauthorized,
    ),
    403: failure(
      "The token's creator is no longer an Editor or above of the project: the token no longer works.",
      errors.forbidden,
    ),
    ...bodyFailures(),
    413: failure(
      "The document is over 8 MiB, or its items come to more than one import takes (split it).",
      errors.payloadTooLarge,
      errorHeaders.extend({ Connection: z.literal("close").optional() }),
    ),
    429: failure(
      "Over the token's rate limit (60 requests a minute unless configured otherwise), or too many failed authentications from this address.",
      errors.rateLimited,
      errorHeaders.extend({ "Retry-After": retryAfter }),
    ),
  },
};
