import "zod-openapi";
import { z } from "zod";
import {
  caseHealthSchema,
  examples,
  failureCauseSchema,
  id,
  idPattern,
  nulMessage,
  quarantineSchema,
  timestamp,
} from "./schemas.js";

/**
 * The shapes of a test case's history (issue 40; docs/rest-api.md, "Test health and quarantine"):
 * GET /v1/test-cases/{id}/history. The health a test result carries (CaseHealth) is in schemas.ts,
 * with the test result.
 */

export const historyExamples = {
  nextCursor: "MjAyNi0xMS0yMlQxMDoxNTo0Mi40NTYwMDBafHRyXzAxamQzazZhMGIxYzJkM2U0ZjVnNmg3ajht",
};

export const historyEntrySchema = z
  .object({
    testResultId: id("tr", "test result", examples.testResultId),
    runId: id("run", "run it was in", examples.runId),
    runName: z.string().meta({ examples: ["nightly"] }),
    environmentId: id("env", "environment it ran against", examples.environmentId),
    testPlanId: id("pln", "test plan", examples.testPlanId)
      .nullable()
      .meta({ description: "The test plan the run was started from; null otherwise." }),
    caseVersion: z
      .int()
      .min(0)
      .meta({ description: "The version of the test case that ran.", examples: [3] }),
    status: z.enum(["PASSED", "FAILED", "SKIPPED"]).meta({ description: "How it ended." }),
    flaky: z
      .boolean()
      .meta({ description: "PASSED after a failed attempt of its own cause (a pass on retry)." }),
    cause: failureCauseSchema.nullable().meta({ description: "A FAILED result's cause; null otherwise." }),
    durationMs: z
      .int()
      .min(0)
      .nullable()
      .meta({ description: "How long it executed; null for a test skipped without executing." }),
    summary: z.string().meta({
      description: "Its summary: one line; variables as {{NAME}}.",
      examples: ['step 1 "log in": expected status 200, got 401'],
    }),
    finishedAt: timestamp("When it finished.").nullable(),
    attempts: z
      .int()
      .min(0)
      .meta({ description: "How many attempts it took.", examples: [1] }),
    startedBy: z
      .object({
        kind: z.enum(["key", "member", "schedule", "unknown"]).meta({
          description:
            "Who started the run: an API key (a pipeline; the key, not its creator), a member in the web console, a schedule; unknown for an operator or a run too old to say.",
        }),
        id: z.string().nullable().meta({
          description: "The key (`key_…`), member (`mem_…`) or schedule (`sch_…`); null when unknown.",
        }),
      })
      .meta({ description: "Who or what started its run." }),
    quarantined: z.boolean().meta({ description: "Its test case was quarantined when its run started." }),
    url: z.string().meta({ description: "Where the test opens in the web console." }),
  })
  .meta({ id: "HistoryEntry", description: "One result of a test case, with its run." });

export const historyAnswerSchema = z
  .object({
    entries: z.array(historyEntrySchema).max(100).meta({ description: "Newest first (by finishedAt)." }),
    nextCursor: z
      .string()
      .nullable()
      .meta({
        description: "Pass as cursor to read the next page; null on the last page.",
        examples: [historyExamples.nextCursor],
      }),
    health: z.array(caseHealthSchema).meta({
      description:
        "The case's health in each environment it has results in (only the one asked for with environment), by environment id.",
    }),
  })
  .meta({ id: "TestCaseHistory" });

export const quarantinesAnswerSchema = z
  .object({
    quarantines: z.array(quarantineSchema).max(1000).meta({
      description: "The quarantines lasting now, the latest started first; at most 1,000.",
    }),
  })
  .meta({ id: "QuarantineList" });

// ---------------------------------------------------------------- parameters

export const testCaseIdParam = z
  .string()
  .regex(new RegExp(idPattern("tc")), "no such test case in this project")
  .meta({
    description:
      "The test case's id (`tc_…`); anything that is not a test case of the key's project gives 404.",
    examples: [examples.testCaseId],
  });

export const historyEnvironmentParam = z
  .string({ error: "environment may be given once" })
  .min(1, "environment must not be empty")
  .max(200, "environment must be an id or a name of at most 200 characters")
  // biome-ignore lint/suspicious/noControlCharactersInRegex: naming NUL is the point: it is refused.
  .regex(/^[^\u0000]*$/, nulMessage)
  .optional()
  .meta({
    description:
      "Only results in this environment: its id or name (names match ignoring case), as POST /v1/runs takes it. Omitted: every environment.",
    examples: ["staging"],
  });
