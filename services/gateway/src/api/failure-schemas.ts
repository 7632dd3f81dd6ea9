import "zod-openapi";
import { z } from "zod";
import {
  count,
  examples,
  failureCauseSchema,
  id,
  idPattern,
  runListItemSchema,
  runSchema,
  runStatusSchema,
  timestamp,
} from "./schemas.js";

/**
 * The shapes of failure groups and run comparisons (issue 41; docs/rest-api.md, "Failure groups"
 * and "Comparing runs"): GET /v1/failure-groups, GET /v1/failure-groups/{id} and
 * GET /v1/runs/{id}/comparison. Kept beside schemas.ts, whose helpers they use, so the run and
 * test-result shapes stay in one file and these in another.
 */

export const failureExamples = {
  failureGroupId: "fg_01jd3k7b2c3d4e5f6g7h8j9k0m",
  baseRunId: "run_01jd3k4z9y8x7w6v5t4s3r2q1p",
  nextCursor: "eyJrIjoiMjAyNi0xMS0yMlQxMDoxNTo0Mi40NTZaIn0",
};

// ---------------------------------------------------------------- failure groups

export const failureGroupStates = ["open", "resolved", "reopened"] as const;

export const failureGroupStateSchema = z.enum(failureGroupStates).meta({
  id: "FailureGroupState",
  description:
    "open: some test case of it has not passed since its last failure in the group; resolved: every case of it passed again in the environment it failed in; reopened: seen again after it was resolved.",
});

export const failureOccurrenceSchema = z
  .object({
    runId: id("run", "run the attempt was in", examples.runId),
    testResultId: id("tr", "test result", examples.testResultId),
    attempt: z
      .int()
      .min(1)
      .meta({ description: "The attempt's number (1 for the first).", examples: [1] }),
    testCaseId: id("tc", "test case", examples.testCaseId),
    testCaseName: z.string().meta({ description: "The test case's name then.", examples: ["Checkout"] }),
    caseVersion: z
      .int()
      .min(0)
      .meta({ description: "The version of the test case that ran (0 when not known).", examples: [3] }),
    environmentId: id("env", "environment", examples.environmentId),
    at: timestamp("When the attempt ended.").nullable(),
    summary: z.string().meta({
      description: "The attempt's summary as reported (variables as {{NAME}}).",
      examples: ['step 2 "buy": expected status 200, got 404'],
    }),
    url: z.string().meta({ description: "Where the test opens in the web console." }),
  })
  .meta({ id: "FailureOccurrence", description: "One failed attempt in a failure group." });

export const failureGroupSchema = z
  .object({
    id: id("fg", "failure group", failureExamples.failureGroupId),
    fingerprint: z.string().meta({
      description: "SHA-256 (hex) of what the group is keyed by: equal fingerprints, one group.",
      examples: ["9b1f0c7d2e3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c"],
    }),
    stepKind: z.enum(["http", "browser"]).meta({ description: "The failed step's kind." }),
    action: z.string().meta({
      description: "The HTTP method, or the browser action (click, fill, expect, …).",
      examples: ["POST"],
    }),
    target: z.string().meta({
      description:
        "The failed step's target: the URL's path with numeric and id-like segments masked, or the locator as Playwright writes it.",
      examples: ["/api/orders/{n}/buy"],
    }),
    cause: failureCauseSchema,
    message: z.string().meta({
      description:
        "The failure's summary with quoted values ({s}), times ({time}), ids ({id}) and numbers ({n}) masked.",
      examples: ["step {n} {s}: expected status {n}, got {n}"],
    }),
    state: failureGroupStateSchema,
    occurrences: count(
      "Failed attempts in the group (its counts outlive the occurrences the history keeps).",
    ),
    casesAffected: count("Distinct test cases those attempts were of."),
    firstSeen: failureOccurrenceSchema
      .nullable()
      .meta({ description: "Where it was first seen; null when that run was pruned." }),
    lastSeen: failureOccurrenceSchema
      .nullable()
      .meta({ description: "Its latest occurrence; null when that run was pruned." }),
    resolvedAt: timestamp("When it was resolved; null unless resolved.").nullable(),
  })
  .meta({
    id: "FailureGroup",
    description:
      "Failed attempts of the project that failed the same way: same step kind, action, target, cause and masked message (docs/rest-api.md, Failure groups).",
  });

export const failureGroupCaseSchema = z
  .object({
    testCaseId: id("tc", "test case", examples.testCaseId),
    name: z.string().meta({ examples: ["Checkout"] }),
    occurrences: count("Its failed attempts in the group."),
    lastSeenAt: timestamp("Its latest failure in the group.").nullable(),
    open: z
      .boolean()
      .meta({ description: "True while it has not passed since its last failure in the group." }),
  })
  .meta({ id: "FailureGroupCase", description: "A test case with failures in a group." });

const nextCursor = z
  .string()
  .nullable()
  .meta({
    description: "Pass as cursor to read the next page; null on the last page.",
    examples: [failureExamples.nextCursor],
  });

const exampleOccurrence = {
  runId: examples.runId,
  testResultId: examples.testResultId,
  attempt: 1,
  testCaseId: examples.testCaseId,
  testCaseName: "Checkout",
  caseVersion: 3,
  environmentId: examples.environmentId,
  at: examples.finishedAt,
  summary: 'step 2 "buy": expected status 200, got 404',
  url: `${examples.runUrl}/tests/${examples.testResultId}`,
};

const exampleGroup = {
  id: failureExamples.failureGroupId,
  fingerprint: "9b1f0c7d2e3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c",
  stepKind: "http",
  action: "POST",
  target: "/api/orders/{n}/buy",
  cause: "assertion",
  message: "step {n} {s}: expected status {n}, got {n}",
  state: "open",
  occurrences: 12,
  casesAffected: 12,
  firstSeen: exampleOccurrence,
  lastSeen: exampleOccurrence,
  resolvedAt: null,
};

export const failureGroupsAnswerSchema = z
  .object({
    failureGroups: z.array(failureGroupSchema).meta({
      description:
        "By impact: the most test cases affected, then the most occurrences, then the latest seen.",
    }),
    nextCursor,
  })
  .meta({ id: "FailureGroups", examples: [{ failureGroups: [exampleGroup], nextCursor: null }] });

export const failureGroupAnswerSchema = z
  .object({
    failureGroup: failureGroupSchema,
    occurrences: z
      .array(failureOccurrenceSchema)
      .meta({ description: "A page of its occurrences, newest first (those the history still keeps)." }),
    nextCursor,
    cases: z
      .array(failureGroupCaseSchema)
      .meta({ description: "Its test cases, the most occurrences first; at most 500." }),
  })
  .meta({
    id: "FailureGroupDetail",
    examples: [
      {
        failureGroup: exampleGroup,
        occurrences: [exampleOccurrence],
        nextCursor: null,
        cases: [
          {
            testCaseId: examples.testCaseId,
            name: "Checkout",
            occurrences: 1,
            lastSeenAt: examples.finishedAt,
            open: true,
          },
        ],
      },
    ],
  });

// ---------------------------------------------------------------- comparisons

export const testChanges = [
  "newly_failing",
  "fixed",
  "still_failing",
  "flaky",
  "new_test",
  "removed_test",
  "unchanged",
] as const;

export const testChangeSchema = z.enum(testChanges).meta({
  id: "TestChange",
  description:
    "newly_failing: FAILED now, not FAILED in the base; fixed: PASSED now, FAILED in the base; still_failing: FAILED in both; flaky: passed on retry now; new_test: not in the base; removed_test: not in the run; unchanged: PASSED in both, or SKIPPED in either.",
});

const stepJson = z
  .record(z.string(), z.unknown())
  .nullable()
  .meta({ description: "The step as that version has it (variables as {{NAME}}); null when absent." });

export const stepChangeSchema = z
  .object({
    number: z
      .int()
      .min(1)
      .meta({
        description: "Its number in the run's version (the base's for a removed step).",
        examples: [2],
      }),
    change: z.enum(["added", "removed", "changed"]),
    before: stepJson,
    after: stepJson,
  })
  .meta({
    id: "StepChange",
    description: "A step that differs between the base's and the run's case version.",
  });

export const testComparisonSchema = z
  .object({
    testCaseId: id("tc", "test case", examples.testCaseId),
    name: z.string().meta({ examples: ["Checkout"] }),
    change: testChangeSchema,
    testResultId: id("tr", "run's test result", examples.testResultId)
      .nullable()
      .meta({ description: "The run's test result; null for a removed test." }),
    baseTestResultId: id("tr", "base's test result", examples.testResultId)
      .nullable()
      .meta({ description: "The base's test result; null for a new test." }),
    status: runStatusSchema.nullable().meta({ description: "Its status in the run; null when absent." }),
    baseStatus: runStatusSchema.nullable().meta({ description: "Its status in the base; null when absent." }),
    caseVersion: z.int().min(0).meta({ description: "The case version the run ran (0 when absent)." }),
    baseCaseVersion: z.int().min(0).meta({ description: "The case version the base ran (0 when absent)." }),
    stepChanges: z
      .array(stepChangeSchema)
      .meta({ description: "How the two versions' steps differ; empty when the same." }),
    failingSinceRunId: id("run", "run its current failures began in", failureExamples.baseRunId)
      .nullable()
      .meta({
        description: "For still_failing: the run its current failures began in, when known; else null.",
      }),
    cause: failureCauseSchema
      .nullable()
      .meta({ description: "The run's failure's cause; null unless FAILED." }),
    failureGroupId: id("fg", "failure group", failureExamples.failureGroupId)
      .nullable()
      .meta({ description: "The run's failure's group (GET /v1/failure-groups/{id}); null otherwise." }),
  })
  .meta({ id: "TestComparison", description: "One test case of a comparison." });

const countOf = (what: string) => count(`Test cases ${what}.`);

/**
 * The comparison's example, its runs made from the Run example (schemas.ts) without its tests, so
 * that a field added to runs shows here too.
 */
function comparisonExample() {
  const { tests: _tests, ...fields } =
    (runSchema.meta() as { examples: Record<string, unknown>[] }).examples[0] ?? {};
  const listed = {
    ...fields,
    environmentId: examples.environmentId,
    testPlanId: examples.testPlanId,
    createdAt: examples.startedAt,
  };
  return {
    run: {
      ...listed,
      status: "FAILED",
      passedTests: 0,
      failedTests: 1,
      newFailures: 1,
      baseRunId: failureExamples.baseRunId,
    },
    base: { ...listed, id: failureExamples.baseRunId, status: "PASSED", newFailures: null, baseRunId: null },
    baseRule: "previous",
    counts: {
      newlyFailing: 1,
      fixed: 0,
      stillFailing: 0,
      flaky: 0,
      newTest: 0,
      removedTest: 0,
      unchanged: 0,
    },
    tests: [
      {
        testCaseId: examples.testCaseId,
        name: "Login works",
        change: "newly_failing",
        testResultId: examples.testResultId,
        baseTestResultId: "tr_01jd3k4z9y8x7w6v5t4s3r2q1q",
        status: "FAILED",
        baseStatus: "PASSED",
        caseVersion: 4,
        baseCaseVersion: 3,
        stepChanges: [
          {
            number: 1,
            change: "changed",
            before: {
              name: "log in",
              http: { request: { method: "POST", path: "/api/login" }, expect: { status: [200] } },
            },
            after: {
              name: "log in",
              http: { request: { method: "POST", path: "/api/signin" }, expect: { status: [200] } },
            },
          },
        ],
        failingSinceRunId: null,
        cause: "assertion",
        failureGroupId: failureExamples.failureGroupId,
      },
    ],
    changes: { baseUrl: null, variablesAdded: [], variablesRemoved: [], casesAdded: [], casesRemoved: [] },
    compareUrl: `${examples.runUrl}/compare`,
  };
}

export const comparisonSchema = z
  .object({
    // The run and the base (null when there is none), without their tests.
    run: runListItemSchema,
    base: runListItemSchema.nullable(),
    baseRule: z.enum(["named", "previous", "none"]).meta({
      description:
        "How the base was chosen: named (the base parameter), previous (the latest finished run created before it on the same environment with the same test plan, or for a run of no plan the same name), none (no such run).",
    }),
    counts: z
      .object({
        newlyFailing: countOf("newly failing"),
        fixed: countOf("fixed"),
        stillFailing: countOf("still failing"),
        flaky: countOf("that passed on retry"),
        newTest: countOf("new in the run"),
        removedTest: countOf("only in the base"),
        unchanged: countOf("unchanged"),
      })
      .meta({ description: "How many test cases of each change." }),
    tests: z.array(testComparisonSchema).meta({
      description:
        "Every test case of either run: the differences first (newly failing, fixed, flaky, still failing, new, removed), then the unchanged, each in run order.",
    }),
    changes: z
      .object({
        baseUrl: z
          .object({ before: z.string(), after: z.string() })
          .nullable()
          .meta({ description: "The environment's base URL in the base and now; null when the same." }),
        variablesAdded: z
          .array(z.string())
          .meta({ description: "Names of the project's variables added since the base (never values)." }),
        variablesRemoved: z
          .array(z.string())
          .meta({ description: "Names of variables removed since the base." }),
        casesAdded: z
          .array(id("tc", "test case", examples.testCaseId))
          .meta({ description: "Test cases in the run's selection, not in the base's." }),
        casesRemoved: z
          .array(id("tc", "test case", examples.testCaseId))
          .meta({ description: "Test cases in the base's selection, not in the run's." }),
      })
      .meta({ description: "What changed around the tests." }),
    compareUrl: z.string().meta({ description: "Where the comparison opens in the web console." }),
  })
  .meta({
    id: "RunComparison",
    description: "A run compared with a base run.",
    examples: [comparisonExample()],
  });

// ---------------------------------------------------------------- parameters

const statesMessage = "state must be open, resolved or reopened";

export const stateParam = z
  .array(z.enum(failureGroupStates, { error: statesMessage }), { error: statesMessage })
  .max(3, "state may be given at most 3 times")
  .optional()
  .meta({
    description:
      "Only groups in these states (repeatable: ?state=open&state=reopened); default open and reopened.",
    examples: [["open"]],
  });

const pageLimitMessage = "limit must be a whole number from 1 to 100";

/** A page's size: 1 to 100, default 50; anything else gives 400 (unlike GET /v1/runs, never clamped). */
export const pageLimitParam = z
  .string({ error: pageLimitMessage })
  .regex(/^0*([1-9][0-9]?|100)$/, pageLimitMessage)
  .optional()
  .meta({ description: "How many per page: 1 to 100; default 50.", examples: ["50"] });

export const cursorParam = z
  .string({ error: "cursor may be given once" })
  .min(1, "cursor must not be empty")
  .max(500, "cursor is not one this API gave")
  .optional()
  .meta({ description: "The nextCursor of the previous page." });

export const baseParam = z
  .string({ error: "base may be given once" })
  .regex(new RegExp(idPattern("run")), "base must be a run id (run_…)")
  .optional()
  .meta({
    description:
      "The run to compare with (`run_…`, of this project); default: the previous run by the base rule.",
    examples: [failureExamples.baseRunId],
  });

export const failureGroupIdParam = z
  .string()
  .regex(new RegExp(idPattern("fg")), "no such failure group in this project")
  .meta({
    description:
      "The failure group's id (`fg_…`); anything that is not a group of the key's project gives 404.",
    examples: [failureExamples.failureGroupId],
  });
