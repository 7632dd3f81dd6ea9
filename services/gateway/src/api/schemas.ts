import "zod-openapi";
import { z } from "zod";

/**
 * The shapes of /v1, once: request bodies, query parameters and headers are validated with these
 * schemas (validate.ts), responses are typed by them (render.ts), and the OpenAPI document
 * (openapi.ts) is generated from them. docs/rest-api.md is the contract in words.
 *
 * Validation messages are part of the contract's answers: each schema carries its own.
 */

// ---------------------------------------------------------------- identifiers and times

export const idPattern = (prefix: string) => `^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`;

/** An identifier as the product hands them out: a type prefix and a lower-case ULID (docs/rest-api.md). */
export const id = (prefix: string, what: string, example: string) =>
  z
    .string()
    .regex(new RegExp(idPattern(prefix)))
    .meta({
      description: `Identifier of the ${what}: \`${prefix}_\` and 26 characters.`,
      examples: [example],
    });

export const examples = {
  projectId: "prj_01jd3k5q7x8y9z0a1b2c3d4e5f",
  environmentId: "env_01jd3k5q7x8y9z0a1b2c3d4e5g",
  testPlanId: "pln_01jd3k5q7x8y9z0a1b2c3d4e5h",
  testCaseId: "tc_01jd3k5q7x8y9z0a1b2c3d4e5j",
  runId: "run_01jd3k6a0b1c2d3e4f5g6h7j8k",
  testResultId: "tr_01jd3k6a0b1c2d3e4f5g6h7j8m",
  artifactId: "art_01jd3k6q2r3s4t5v6w7x8y9z0a",
  startedAt: "2026-11-22T10:15:30.123Z",
  finishedAt: "2026-11-22T10:15:42.456Z",
  runUrl:
    "https://testrun.example.com/projects/prj_01jd3k5q7x8y9z0a1b2c3d4e5f/runs/run_01jd3k6a0b1c2d3e4f5g6h7j8k",
};

export const timestamp = (description: string) =>
  z.iso.datetime({ precision: 3 }).meta({
    description: `${description} RFC 3339, UTC, with milliseconds.`,
    examples: [examples.startedAt],
  });

export const count = (description: string) => z.int().min(0).max(2_147_483_647).meta({ description });

// ---------------------------------------------------------------- catalog

export const projectSchema = z
  .object({
    id: id("prj", "project", examples.projectId),
    name: z.string().meta({ examples: ["Shop"] }),
    createdAt: timestamp("When the project was created."),
  })
  .meta({ id: "Project", description: "The project the key belongs to." });

export const environmentSchema = z
  .object({
    id: id("env", "environment", examples.environmentId),
    name: z.string().meta({ examples: ["staging"] }),
    baseUrl: z.string().meta({
      description: "Base address of the environment under test.",
      examples: ["https://staging.example.com"],
    }),
    isDefault: z.boolean().meta({ description: "Whether runs go here when no environment is named." }),
  })
  .meta({ id: "Environment" });

export const testPlanSchema = z
  .object({
    id: id("pln", "test plan", examples.testPlanId),
    name: z.string().meta({ examples: ["Smoke"] }),
    description: z.string().meta({ examples: ["Fast checks before a deploy"] }),
    testCaseCount: count("Number of test cases in the plan (enabled or not)."),
    retries: z
      .int()
      .min(0)
      .max(3)
      .nullable()
      .meta({
        description:
          "How many times a failed attempt of each of its test cases is run again when a run selects the plan (0 to 3), replacing each test case's own; null: the plan sets none, each test case's own apply.",
        examples: [1],
      }),
  })
  .meta({ id: "TestPlan" });

export const testCaseSchema = z
  .object({
    id: id("tc", "test case", examples.testCaseId),
    name: z.string().meta({ examples: ["Login works"] }),
    tags: z.array(z.string()).meta({ examples: [["smoke", "auth"]] }),
    enabled: z.boolean().meta({ description: "Only enabled test cases are selected by a plan or by tags." }),
    retries: z
      .int()
      .min(0)
      .max(3)
      .meta({
        description:
          "How many times a failed attempt of it is run again in a run (0 to 3); a pass on a retry makes the test flaky. A plan's or a run's retries replace it.",
        examples: [0],
      }),
  })
  .meta({ id: "TestCase" });

export const projectAnswerSchema = z
  .object({
    project: projectSchema,
    environments: z.array(environmentSchema).meta({ description: "Oldest first." }),
    testPlans: z.array(testPlanSchema).meta({ description: "Oldest first." }),
  })
  .meta({ id: "ProjectAnswer" });

export const environmentsAnswerSchema = z
  .object({ environments: z.array(environmentSchema).meta({ description: "Oldest first." }) })
  .meta({ id: "EnvironmentList" });

export const testPlansAnswerSchema = z
  .object({ testPlans: z.array(testPlanSchema).meta({ description: "Oldest first." }) })
  .meta({ id: "TestPlanList" });

export const testCasesAnswerSchema = z
  .object({
    testCases: z.array(testCaseSchema).max(500).meta({ description: "Oldest first, at most 500." }),
    truncated: z.boolean().meta({ description: "Whether more test cases matched than the 500 listed." }),
  })
  .meta({ id: "TestCaseList" });

// ---------------------------------------------------------------- runs

const statuses = ["QUEUED", "RUNNING", "PASSED", "FAILED", "SKIPPED"] as const;

export const runStatusSchema = z.enum(statuses).meta({
  id: "RunStatus",
  description:
    "A test: QUEUED, RUNNING when an executor takes it, then PASSED, FAILED or SKIPPED. A run: RUNNING until every test is final, then FAILED if any failed, else PASSED if any passed, else SKIPPED.",
});

export const skipReasonSchema = z.enum(["environment_unreachable", "cancelled", "no_executor"]).meta({
  id: "SkipReason",
  description:
    "Why a run ended SKIPPED: its environment did not answer before execution, it was cancelled, or no executor took its tests in time.",
});

/** What an artifact holds, and the one content type of each kind. */
export const artifactKinds = {
  screenshot: "image/png",
  trace: "application/zip",
  browser_log: "application/json",
  http_response: "application/json",
} as const;

export const artifactSchema = z
  .object({
    id: id("art", "artifact", examples.artifactId),
    kind: z.enum(["screenshot", "trace", "browser_log", "http_response"]).meta({
      description:
        "screenshot: a PNG of the page (at a screenshot step, or when a browser step failed); trace: a Playwright trace (zip) for the Playwright trace viewer; browser_log: the page's console errors and failed requests (JSON); http_response: what a failed HTTP step got, its status, headers, the body's first 16 KiB and the request's timing, redacted (JSON).",
    }),
    name: z.string().meta({
      description: 'A screenshot step\'s name, "failure", "trace", "browser-log" or "http-response".',
      examples: ["failure"],
    }),
    contentType: z.enum(["image/png", "application/zip", "application/json"]).meta({
      description: "The media type GET on url answers with: image/png, application/zip or application/json.",
    }),
    size: z
      .int()
      .min(0)
      .meta({ description: "Its size in bytes.", examples: [48213] }),
    step: z
      .int()
      .min(0)
      .meta({
        description:
          "The number (1 for the first) of the step it was taken at; 0 for the whole test (trace, log).",
        examples: [2],
      }),
    url: z.string().meta({
      description:
        "Where GET with a key of the run's project answers its bytes (GET /v1/runs/{runId}/tests/{testResultId}/artifacts/{artifactId}); 404 with any other key, and once the retention period passed.",
      examples: [
        `https://testrun.example.com/v1/runs/${examples.runId}/tests/${examples.testResultId}/artifacts/${examples.artifactId}`,
      ],
    }),
  })
  .meta({
    id: "Artifact",
    description:
      "A file a test produced (browser tests: screenshots, a trace, the browser's log), kept for the retention period (30 days unless configured otherwise).",
  });

export const failureCauseSchema = z
  .enum([
    "assertion",
    "locator",
    "timeout",
    "network",
    "egress_refused",
    "environment_unreachable",
    "browser",
    "executor_lost",
    "no_executor",
  ])
  .meta({
    id: "FailureCause",
    description:
      "Why an attempt FAILED, decided from its failed step's structured result: assertion (an expectation not met), locator (no element, or several where one was needed), timeout (a step's or the test's deadline), network (DNS, refused, reset, TLS towards the environment), egress_refused (the executor's egress guard), environment_unreachable; and the system's own, retried without using the test's retries and never making it flaky: browser (could not start or crashed), executor_lost (its executor stopped renewing its lease), no_executor (no executor took it in time).",
  });

const durationMs = (description: string) => z.int().min(0).nullable().meta({ description });

export const stepResultSchema = z
  .object({
    number: z
      .int()
      .min(1)
      .meta({ description: "The step's number (1 for the first).", examples: [1] }),
    status: runStatusSchema,
    durationMs: z
      .int()
      .min(0)
      .meta({ description: "How long the step took, in milliseconds.", examples: [212] }),
    name: z
      .string()
      .max(300)
      .nullable()
      .meta({
        description:
          "A Playwright spec's step: its test()'s title (one line, at most 300 characters); null for a steps test's step.",
        examples: ["adds to cart"],
      }),
    error: z
      .string()
      .max(300)
      .nullable()
      .meta({
        description:
          "A Playwright spec's FAILED step: its error, one line of at most 300 characters, every variable value replaced by {{NAME}}; null otherwise.",
        examples: [null],
      }),
  })
  .meta({
    id: "StepResult",
    description:
      "How one step of an attempt went: PASSED or FAILED (a step after a failed one did not run). A Playwright spec's steps are its test()s: each named, SKIPPED for a test.skip, and they go on past a FAILED one.",
  });

export const testAttemptSchema = z
  .object({
    number: z
      .int()
      .min(1)
      .meta({ description: "1 for the first attempt, +1 for each later one.", examples: [1] }),
    status: runStatusSchema,
    startedAt: timestamp("When it started executing.").nullable(),
    finishedAt: timestamp("When it ended; null while RUNNING.").nullable(),
    durationMs: durationMs("How long it executed, in milliseconds; null while RUNNING."),
    summary: z.string().meta({
      description: "As the test result's summary, for this attempt ({{NAME}} in place of variable values).",
      examples: ['step 1 "open": expected status 200, got 500'],
    }),
    failedStep: z
      .int()
      .min(1)
      .nullable()
      .meta({
        description:
          "The number of the step it failed at; null unless FAILED at a step (e.g. its executor was lost before one ran).",
        examples: [1],
      }),
    stepResults: z.array(stepResultSchema).meta({ description: "How each step that ran went, in order." }),
    cause: failureCauseSchema
      .nullable()
      .meta({ description: "Why it FAILED (FailureCause); null unless FAILED." }),
    executor: z
      .string()
      .nullable()
      .meta({ description: "The executor that ran it; null when not known.", examples: ["executor-7c9f-1"] }),
    artifacts: z.array(artifactSchema).meta({
      description:
        "What this attempt produced, in the order stored (the test result's artifacts are its last attempt's).",
    }),
  })
  .meta({
    id: "TestAttempt",
    description:
      "One attempt of a test: a claim by an executor and how it ended (status RUNNING while it executes, then PASSED, FAILED or SKIPPED). A failed attempt is retried while the test's retries allow; one that failed with the system's cause (browser, executor_lost, no_executor) without using them.",
  });

// ---------------------------------------------------------------- test health (issue 40)

export const healthStates = ["unknown", "stable", "flaky", "failing", "new_failure", "quarantined"] as const;

export const healthStateSchema = z.enum(healthStates).meta({
  id: "HealthState",
  description:
    "A test case's state in one environment, from its results within the project's window (docs/rest-api.md, Test health and quarantine): unknown (too few results of its latest version, none failed), stable (enough results, none failed), flaky (on its latest version it both passed and failed, a pass on retry counting as both), failing (every result since a version, or the last three or more, failed), new_failure (its latest result failed, the first failure after passes), quarantined (a quarantine lasts: its failures do not fail runs).",
});

const rateSchema = (what: string) =>
  z
    .object({
      count: count("The events counted."),
      sample: count("Out of this many."),
      rate: z
        .number()
        .min(0)
        .max(1)
        .meta({ description: "count / sample; 0 when sample is 0.", examples: [0.2] }),
      low: z
        .number()
        .min(0)
        .max(1)
        .meta({ description: "The 95% Wilson interval's lower bound.", examples: [0.08] }),
      high: z
        .number()
        .min(0)
        .max(1)
        .meta({ description: "Its upper bound.", examples: [0.39] }),
    })
    .meta({ description: what });

export const resultRefSchema = z
  .object({
    runId: id("run", "run", examples.runId),
    testResultId: id("tr", "test result", examples.testResultId),
    caseVersion: z
      .int()
      .min(0)
      .meta({ description: "The case version it ran.", examples: [3] }),
    at: timestamp("When it finished.").nullable(),
  })
  .meta({ id: "ResultRef", description: "One result of a test case: where and when." });

const memberId = (what: string) =>
  z
    .string()
    .regex(new RegExp(idPattern("mem")))
    .nullable()
    .meta({ description: what, examples: ["mem_01jd3k5q7x8y9z0a1b2c3d4e5k"] });

export const quarantineSchema = z
  .object({
    testCaseId: id("tc", "test case", examples.testCaseId),
    reason: z
      .string()
      .meta({ description: "Why (1 to 300 characters).", examples: ["flaky login, TICKET-123"] }),
    startedAt: timestamp("When it started.").nullable(),
    expiresAt: timestamp("When it ends by itself (at most 90 days after it started).").nullable(),
    startedByMemberId: memberId("The member who started it; null for an operator."),
    endedAt: timestamp("When it was lifted or expired; null while it lasts.").nullable(),
    liftedByMemberId: memberId(
      "The member who lifted it; null while it lasts, once expired, or for an operator.",
    ),
    active: z.boolean().meta({ description: "True while it lasts." }),
  })
  .meta({
    id: "Quarantine",
    description:
      "A test case's quarantine: while it lasts, a failure of the case in a run started then is counted (failedTests, quarantinedFailures) but does not fail the run. Members (Editor or above) start and lift them in the web console; keys only read them.",
  });

export const caseHealthSchema = z
  .object({
    testCaseId: id("tc", "test case", examples.testCaseId),
    environmentId: id("env", "environment", examples.environmentId),
    name: z
      .string()
      .meta({ description: "The case's name at its latest result.", examples: ["Login works"] }),
    state: healthStateSchema,
    judged: healthStateSchema.meta({
      description: "The state its results give, quarantine aside (never quarantined).",
    }),
    caseVersion: z
      .int()
      .min(0)
      .meta({ description: "The case version of its latest result.", examples: [3] }),
    sampleSize: count("Results in the window: SKIPPED ones and failures with the system's causes left out."),
    enoughResults: z.boolean().meta({
      description:
        "False below the project's minimum (default 5): the rates say little yet (not enough results).",
    }),
    failureRate: rateSchema("Results in the window that failed (a pass on retry included), of sampleSize."),
    flipRate: rateSchema(
      "Consecutive results in the window whose outcome differs (passed against failed), of sampleSize - 1.",
    ),
    failingSince: resultRefSchema.nullable().meta({
      description: "Where the current run of failures began; null unless its latest result failed.",
    }),
    lastFailure: resultRefSchema
      .nullable()
      .meta({ description: "Its latest failure (a pass on retry included), in any window; null if none." }),
    lastResult: resultRefSchema.nullable().meta({ description: "Its latest result." }),
    medianDurationMs: count(
      "The median duration in the window, in milliseconds (0 with fewer than 2 results).",
    ),
    p90DurationMs: count("The 90th percentile duration in the window (0 with fewer than 2 results)."),
    previousMedianDurationMs: count(
      "The median of the older half of the window (0 when not known): against medianDurationMs, the trend.",
    ),
    resultsTotal: z
      .int()
      .min(0)
      .meta({ description: "Every result since its first, whatever the retention pruned." }),
    failuresTotal: z.int().min(0).meta({ description: "Every failure since its first result." }),
    outcomes: z.string().meta({
      description: "The outcomes in the window, newest first: p passed, r passed on retry, f failed.",
      examples: ["ppfpp"],
    }),
    quarantine: quarantineSchema
      .nullable()
      .meta({ description: "The quarantine lasting now; null if none." }),
  })
  .meta({
    id: "CaseHealth",
    description:
      "A test case's health in one environment, kept current by each of its results (docs/rest-api.md, Test health and quarantine).",
  });

export const testResultSchema = z
  .object({
    id: id("tr", "test result", examples.testResultId),
    testCaseId: id("tc", "test case it ran", examples.testCaseId),
    name: z.string().meta({ examples: ["Login works"] }),
    status: runStatusSchema,
    durationMs: z
      .int()
      .min(0)
      .nullable()
      .meta({ description: "How long the test ran, in milliseconds; null until it ran." }),
    summary: z.string().meta({
      description:
        "One line of at most 300 characters. Variable values never appear: a variable NAME shows as {{NAME}}.",
      examples: ['step 1 "log in": expected status 200, got 401'],
    }),
    url: z.string().meta({ description: "Where the test opens in the web console." }),
    artifacts: z.array(artifactSchema).meta({
      description:
        "What the test produced, in the order stored: screenshots, a trace, the browser's log. Empty until the test is final, and for tests without browser steps.",
    }),
    failedStep: z
      .int()
      .min(1)
      .nullable()
      .meta({
        description:
          "The number (1 for the first) of the step the test FAILED at (its last attempt's); null otherwise (passed, skipped, or failed before a step ran).",
        examples: [1],
      }),
    stepResults: z.array(stepResultSchema).meta({
      description:
        "How each step of its last attempt that ran went, in order; empty until the test is final.",
    }),
    flaky: z.boolean().meta({
      description:
        "True when the test PASSED after an attempt of this run FAILED with a cause of the test's own (not browser, executor_lost or no_executor): a pass on retry. Such a test counts in passedTests and in the run's flakyTests.",
    }),
    cause: failureCauseSchema.nullable().meta({
      description: "For a FAILED test: the cause of its last attempt (FailureCause); null otherwise.",
    }),
    retries: z
      .int()
      .min(0)
      .max(3)
      .meta({
        description:
          "How many times a FAILED attempt of the test is retried (0 to 3): the run request's retries, else the test plan's, else the test case's.",
        examples: [1],
      }),
    attempts: z.array(testAttemptSchema).meta({
      description:
        "Every attempt, oldest first: the ended ones, then the current or last one, whose status, summary, durationMs and artifacts are the test result's. Empty while never started.",
    }),
    newFailure: z.boolean().meta({
      description:
        "FAILED while its test case did not fail in the run's base run (baseRunId): one of the run's newFailures. Set when the run finished.",
    }),
    failureGroup: z
      .object({
        id: id("fg", "failure group", "fg_3f1c0a9b2d7e4c5f8a6b1d2e3f"),
        occurrences: count("Failed attempts in the group."),
        casesAffected: count("Test cases those attempts were of."),
        firstSeenRunId: id("run", "run the group was first seen in", examples.runId),
        firstSeenAt: timestamp("When the group was first seen.").nullable(),
      })
      .nullable()
      .meta({
        id: "FailureGroupBrief",
        description:
          "For a FAILED test whose cause is the test's: the failure group of its last attempt (GET /v1/failure-groups/{id}); null otherwise.",
      }),
    health: caseHealthSchema.nullable().meta({
      description:
        "Its test case's health in the run's environment as of this read (GET /v1/runs/{id} and the answers that show a run); null before the case has a result there.",
    }),
    quarantined: z.boolean().meta({
      description:
        "Its test case was quarantined when the run started: a failure of it is counted (failedTests, quarantinedFailures) but does not fail the run.",
    }),
  })
  .meta({ id: "TestResult" });

const runFields = {
  id: id("run", "run", examples.runId),
  name: z.string().meta({ examples: ["Smoke"] }),
  status: runStatusSchema,
  finished: z.boolean().meta({ description: "True once the run can no longer change." }),
  totalTests: count("Tests in the run."),
  passedTests: count("Tests that passed."),
  failedTests: count("Tests that failed."),
  flakyTests: count("Tests that passed on retry (flaky: true); counted in passedTests too."),
  startedAt: timestamp("When the run started.").nullable(),
  finishedAt: timestamp("When the run finished; null while it is not finished.").nullable(),
  durationMs: z
    .int()
    .min(0)
    .nullable()
    .meta({ description: "finishedAt - startedAt in milliseconds; null while not finished." }),
  skipReason: skipReasonSchema.nullable(),
  url: z
    .string()
    .meta({ description: "Where the run opens in the web console.", examples: [examples.runUrl] }),
  newFailures: count(
    "Once finished: its FAILED tests whose test case did not fail in its base run (the latest finished run before it on the same environment with the same plan, or name); null while running and without a base.",
  ).nullable(),
  baseRunId: id("run", "base run", examples.runId)
    .nullable()
    .meta({ description: "Once finished: the base run newFailures is counted against; null without one." }),
  quarantinedFailures: count(
    "FAILED tests whose test case was quarantined when the run started (quarantined: true); counted in failedTests too. The run's status leaves them out: FAILED only if a test not quarantined failed.",
  ),
};

export const runSchema = z.object({ ...runFields, tests: z.array(testResultSchema) }).meta({
  id: "Run",
  description: "A run with its tests (GET /v1/runs/{id}).",
  examples: [
    {
      id: examples.runId,
      name: "Smoke",
      status: "PASSED",
      finished: true,
      totalTests: 1,
      passedTests: 1,
      failedTests: 0,
      flakyTests: 0,
      startedAt: examples.startedAt,
      finishedAt: examples.finishedAt,
      durationMs: 12333,
      skipReason: null,
      url: examples.runUrl,
      newFailures: 0,
      baseRunId: null,
      quarantinedFailures: 0,
      tests: [
        {
          id: examples.testResultId,
          testCaseId: examples.testCaseId,
          name: "Login works",
          status: "PASSED",
          durationMs: 830,
          summary: "2 steps passed",
          url: `${examples.runUrl}/tests/${examples.testResultId}`,
          artifacts: [],
          failedStep: null,
          stepResults: [
            { number: 1, status: "PASSED", durationMs: 610, name: null, error: null },
            { number: 2, status: "PASSED", durationMs: 220, name: null, error: null },
          ],
          flaky: false,
          cause: null,
          retries: 0,
          attempts: [
            {
              number: 1,
              status: "PASSED",
              startedAt: examples.startedAt,
              finishedAt: "2026-11-22T10:15:31.019Z",
              durationMs: 830,
              summary: "2 steps passed",
              failedStep: null,
              stepResults: [
                { number: 1, status: "PASSED", durationMs: 610, name: null, error: null },
                { number: 2, status: "PASSED", durationMs: 220, name: null, error: null },
              ],
              cause: null,
              executor: "executor-7c9f-1",
              artifacts: [],
            },
          ],
          newFailure: false,
          failureGroup: null,
          health: null,
          quarantined: false,
        },
      ],
    },
  ],
});

export const runListItemSchema = z
  .object({
    ...runFields,
    environmentId: id("env", "environment the run ran against", examples.environmentId),
    testPlanId: id("pln", "test plan the run was started from", examples.testPlanId)
      .nullable()
      .meta({ description: "The test plan the run was started from; null unless started from a plan." }),
    createdAt: timestamp("When the run was created."),
  })
  .meta({ id: "RunListItem", description: "A run as listed: without tests, with where it ran." });

export const runsAnswerSchema = z
  .object({ runs: z.array(runListItemSchema).max(100).meta({ description: "Newest first." }) })
  .meta({ id: "RunList" });

// ---------------------------------------------------------------- errors

const errorMessage = z.string().min(1).meta({ description: "What went wrong, for a person." });

/** An error body with one of the given codes (and the extras of that answer). */
const errorBody = <C extends string, E extends z.ZodRawShape = Record<never, never>>(
  componentId: string,
  codes: readonly [C, ...C[]],
  description: string,
  extra?: E,
) =>
  z
    .object({
      error: errorMessage,
      code: z.enum(codes).meta({ description: "Machine-readable code." }),
      ...extra,
    })
    .meta({ id: componentId, description });

export const errors = {
  invalidRequest: errorBody(
    "InvalidRequestError",
    ["invalid_request"],
    "The request is not valid; the message says why.",
  ),
  unauthorized: errorBody(
    "UnauthorizedError",
    ["unauthorized", "key_expired"],
    "No key, a malformed, unknown or revoked key (unauthorized), or an expired key (key_expired).",
  ),
  forbidden: errorBody(
    "ForbiddenError",
    ["forbidden"],
    "The key's creator is no longer an Editor or above (or lost those rights after the key was made).",
  ),
  notFound: errorBody("NotFoundError", ["not_found"], "No such item in the key's project, or no such path."),
  insufficientCredits: errorBody(
    "InsufficientCreditsError",
    ["insufficient_credits"],
    "Not enough test-run credits; nothing was started.",
    {
      required: count("Credits the run needs: one per test."),
      available: z.int().meta({ description: "The project's balance." }),
    },
  ),
  ambiguousName: errorBody(
    "AmbiguousNameError",
    ["ambiguous_name"],
    "A name matched several items; pass one of the candidates' ids instead.",
    { candidates: z.array(z.string()).min(2).meta({ description: "Ids of the items the name matched." }) },
  ),
  runFinished: errorBody(
    "RunFinishedError",
    ["run_finished"],
    "The run is finished: it cannot be cancelled.",
  ),
  idempotencyKeyInUse: errorBody(
    "IdempotencyKeyInUseError",
    ["idempotency_key_in_use"],
    "Another request with this Idempotency-Key is still being answered; retry it in a moment.",
  ),
  payloadTooLarge: errorBody(
    "PayloadTooLargeError",
    ["payload_too_large"],
    "The request body is over 1 MiB.",
  ),
  requestTimeout: errorBody(
    "RequestTimeoutError",
    ["request_timeout"],
    "The request body did not arrive whole within HTTP_BODY_TIMEOUT_SECONDS (30 s) of its headers.",
  ),
  idempotencyKeyReused: errorBody(
    "IdempotencyKeyReusedError",
    ["idempotency_key_reused"],
    "The Idempotency-Key was used in the last 24 hours with another request body.",
  ),
  rateLimited: errorBody(
    "RateLimitedError",
    ["rate_limited"],
    "Over the key's rate limit, over its concurrent waits, or too many failed authentications from this address. Wait Retry-After seconds.",
  ),
  internal: errorBody(
    "InternalError",
    ["internal"],
    "A failure inside the service; the message says nothing more.",
  ),
  runStartedInternal: errorBody(
    "RunStartedError",
    ["internal"],
    "A failure inside the service. When the body carries id and url, the run was started but could not be read back: follow it with GET /v1/runs/{id}, do not post again.",
    {
      id: id("run", "run that was started", examples.runId).optional(),
      url: z.string().optional().meta({ description: "Where the started run opens in the web console." }),
    },
  ),
};

/** Every machine-readable error code of /v1 (docs/rest-api.md, "Errors"). */
export const errorCodes = [
  "invalid_request",
  "unauthorized",
  "key_expired",
  "forbidden",
  "not_found",
  "ambiguous_name",
  "insufficient_credits",
  "run_finished",
  "idempotency_key_reused",
  "idempotency_key_in_use",
  "rate_limited",
  "payload_too_large",
  "request_timeout",
  "method_not_allowed",
  "internal",
] as const;

export type ErrorCode = (typeof errorCodes)[number];

/** Any error body of the gateway: every answer of 400 or above, /v1 or not, has this shape. */
export const errorSchema = z
  .looseObject({
    error: errorMessage,
    code: z.enum(errorCodes).meta({ description: "Machine-readable code." }),
  })
  .meta({
    id: "Error",
    description:
      "The shape of every error body: a message for people and a code for programs, plus the extras of some answers (required and available on 402, candidates on 409, id and url on a 500 after a start).",
    examples: [{ error: "no such test plan: Smok", code: "not_found" }],
  });

// ---------------------------------------------------------------- requests

/**
 * Text the services cannot store or compare (PostgreSQL text holds no NUL) is refused here with
 * the catalog's own words; among several problems it is reported last, as it was when only the
 * services refused it (validate.ts ranks it so).
 */
export const nulMessage = "text in the request must not contain NUL characters";
// biome-ignore lint/suspicious/noControlCharactersInRegex: naming NUL is the point: it is refused.
const noNul = /^[^\u0000]*$/;
const withoutNul = <S extends z.ZodString>(schema: S) => schema.regex(noNul, nulMessage);

const maxNameLength = 200;
export const maxListLength = 500;
/** Entries as sent, duplicates included: bounds the work a body can cost before it is deduplicated. */
export const maxRawListLength = 1000;

const nonEmptyStrings = (field: string) => {
  const message = `${field} must be an array of non-empty strings`;
  return z
    .array(withoutNul(z.string({ error: message }).min(1, message)), { error: message })
    .min(1, `${field} is empty: nothing to run`)
    .max(maxRawListLength, `${field} may hold at most ${maxRawListLength} entries, duplicates included`)
    .refine(
      (list) => new Set(list).size <= maxListLength,
      `${field} may hold at most ${maxListLength} distinct entries`,
    );
};

/** The three ways of choosing what a run executes; exactly one is given (null counts as not given). */
export const selectionFields = ["testPlan", "testCaseIds", "tags"] as const;

const startRunShape = {
  // Checked in this order after unknown fields and the selection rule: name, environment, then
  // the selection, as the gateway always has (the first problem found is the one reported).
  name: withoutNul(z.string({ error: "name must be a string" }))
    .refine((name) => [...name].length <= maxNameLength, `name may be at most ${maxNameLength} characters`)
    .nullish()
    .meta({
      maxLength: maxNameLength,
      description:
        "Run name, at most 200 characters. Omitted, null or empty: named after the selection (the plan's name, `tags: a, b`, or `N test cases`).",
      examples: ["nightly"],
    }),
  environment: z
    .string({ error: "environment must be a string" })
    .nullish()
    .meta({
      description:
        "Environment id or name (names match ignoring case). Omitted, null or empty: the project's default environment, else its oldest.",
      examples: ["staging"],
    }),
  testPlan: withoutNul(z.string({ error: "testPlan must be a string" }).min(1, "testPlan must not be empty"))
    .nullish()
    .meta({
      description: "Test plan id or name (names match ignoring case): runs the plan's enabled test cases.",
      examples: ["Smoke"],
    }),
  testCaseIds: nonEmptyStrings("testCaseIds")
    .nullish()
    .meta({
      description:
        "Test case ids: runs exactly these, enabled or not; duplicates count once; at most 500 distinct ids and 1000 entries in all; an unknown id gives 404.",
      examples: [[examples.testCaseId]],
    }),
  tags: nonEmptyStrings("tags")
    .nullish()
    .meta({
      description:
        "Runs every enabled test case having any of these tags (ignoring case); at most 500 distinct tags and 1000 entries in all; more than 500 matching test cases gives 400.",
      examples: [["smoke"]],
    }),
  recordTraces: z
    .boolean({ error: "recordTraces must be true or false" })
    .nullish()
    .meta({
      description:
        "true: keep a Playwright trace of every test with browser steps, passed or failed (a trace artifact). Omitted, null or false: a trace is kept for failed tests only, or when the test case asks for one.",
      examples: [true],
    }),
  retries: z
    .int({ error: "retries must be a whole number from 0 to 3" })
    .min(0, { error: "retries must be a whole number from 0 to 3" })
    .max(3, { error: "retries must be a whole number from 0 to 3" })
    .nullish()
    .meta({
      description:
        "How many times a failed attempt of each test is run again (0 to 3), replacing the test plan's and each test case's; a pass on a retry makes the test PASSED and flaky. Omitted or null: the plan's when it sets them, else each test case's.",
      examples: [2],
    }),
};

/** exactly one selection: the runtime rule (a zod check) and its JSON Schema form (oneOf), side by side. */
const exactlyOneSelection = {
  check: (body: Record<string, unknown>, issues: z.core.$ZodRawIssue[]) => {
    const given = selectionFields.filter((field) => body[field] !== undefined && body[field] !== null);
    if (given.length === 1) return;
    issues.push({
      code: "custom",
      input: body,
      path: [],
      message:
        given.length === 0
          ? "give exactly one of testPlan, testCaseIds, tags: none was given"
          : `give exactly one of testPlan, testCaseIds, tags: got ${given.join(", ")}`,
    });
  },
  jsonSchema: {
    oneOf: selectionFields.map((field) => ({
      required: [field],
      properties: { [field]: { not: { type: "null" } } },
    })),
  },
};

const unknownField = (accepted: readonly string[]) => (issue: z.core.$ZodRawIssue) =>
  issue.code === "unrecognized_keys"
    ? `unknown field "${(issue.keys as string[])[0]}"; ${accepted.length ? `accepted: ${accepted.join(", ")}` : "this endpoint takes none"}`
    : undefined;

const startRunAccepted = [
  "environment",
  "testPlan",
  "testCaseIds",
  "tags",
  "name",
  "recordTraces",
  "retries",
];

/** The start-run body of POST /v1/runs (docs/rest-api.md, "Starting a run"). */
export const startRunBodySchema = z
  .strictObject(startRunShape, { error: unknownField(startRunAccepted) })
  // Checked even when a field is of the wrong type: the selection rule is reported first.
  .superRefine((body, ctx) => exactlyOneSelection.check(body as Record<string, unknown>, ctx.issues), {
    when: (payload) => payload.value !== null && typeof payload.value === "object",
  })
  .meta({
    id: "StartRunBody",
    description:
      "Exactly one of testPlan, testCaseIds, tags (a field given as null counts as not given); unknown fields give 400 naming the field.",
    examples: [{ testPlan: "Smoke" }, { tags: ["smoke"], environment: "staging", name: "deploy 1234" }],
    override: ({ jsonSchema }) => {
      Object.assign(jsonSchema, exactlyOneSelection.jsonSchema);
    },
  });

export const rerunBodySchema = z
  .strictObject(
    {
      failedOnly: z
        .boolean({ error: "failedOnly must be true or false" })
        .optional()
        .meta({
          description:
            "true: only the tests of the run that FAILED; false (the default): every test of the run.",
          examples: [true],
        }),
    },
    { error: unknownField(["failedOnly"]) },
  )
  .meta({
    id: "RerunBody",
    description: "What to run again. An empty object (or no body) reruns every test.",
    examples: [{ failedOnly: true }],
  });

export const cancelBodySchema = z.strictObject({}, { error: unknownField([]) }).meta({
  id: "CancelBody",
  description: "Nothing: no body, or an empty object.",
  examples: [{}],
});

// ---------------------------------------------------------------- query parameters and headers

/** GET /v1/runs?limit: default 20, larger than 100 gives 100, not a whole number of at least 1 gives 400. */
export const limitParam = z
  .string({ error: "limit must be a whole number of at least 1" })
  .regex(/^0*[1-9][0-9]*$/, "limit must be a whole number of at least 1")
  .optional()
  .meta({
    description: "How many runs: a whole number of at least 1; default 20; larger than 100 gives 100.",
    examples: ["20"],
  });

export const minWaitSeconds = 1;
export const maxWaitSeconds = 30;

/** GET /v1/runs/{id}?wait: 1 to 30 seconds. */
export const waitParam = z
  .string({ error: "wait must be a whole number of seconds from 1 to 30" })
  .regex(/^(?:[1-9]|[12][0-9]|30)$/, "wait must be a whole number of seconds from 1 to 30")
  .optional()
  .meta({
    description:
      "Long-poll: answer as soon as the run is finished, or after this many seconds (1 to 30) with the run as it is then. Costs one request of the rate limit.",
    examples: ["30"],
  });

export const tagParam = z
  .array(withoutNul(z.string()))
  .optional()
  .meta({
    description: "Only test cases having any of these tags (ignoring case); may repeat: ?tag=a&tag=b.",
    examples: [["smoke"]],
  });

export const searchParam = withoutNul(z.string({ error: "search may be given once" }))
  .optional()
  .meta({
    description: "Only test cases whose name contains this text (ignoring case).",
    examples: ["login"],
  });

/** The Idempotency-Key header: 1 to 255 visible ASCII characters (a UUID, say). */
export const idempotencyKeyHeader = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, "Idempotency-Key must be 1 to 255 visible ASCII characters")
  .optional()
  .meta({
    description:
      "Makes the POST safe to retry: the same key with the same body within 24 hours answers with the run the first request started (with Idempotency-Replayed: true) instead of starting another; the same key with another body gives 422 idempotency_key_reused. Keys are per API key.",
    examples: ["5f0c2e8a-9b1d-4c3e-8f7a-2d6b1e9c4a30"],
  });

/** An artifact id; anything else cannot be an artifact of the project: 404 (validate.ts). */
export const artifactIdParam = z
  .string()
  .regex(new RegExp(idPattern("art")), "no such artifact")
  .meta({
    description:
      "The artifact's id (`art_…`); anything that is not an artifact of the key's project gives 404.",
    examples: [examples.artifactId],
  });

/** A test result id in an artifact's path; anything else cannot be a test of the run: 404 (validate.ts). */
export const testResultIdParam = z
  .string()
  .regex(new RegExp(idPattern("tr")), "no such artifact")
  .meta({
    description: "The test result's id (`tr_…`) the artifact belongs to; any other gives 404.",
    examples: [examples.testResultId],
  });

export const runIdParam = z
  .string()
  .regex(new RegExp(idPattern("run")), "no such run in this project")
  .meta({
    description: "The run's id (`run_…`); anything that is not a run of the key's project gives 404.",
    examples: [examples.runId],
  });
