// The MCP tools that say why a run broke (issue 41; docs/agents.md, "Why a run broke"):
// compare_runs (a run against its base: what is new, fixed, still failing, flaky) and
// explain_failure (one failed test: its attempts, cause, evidence, failure group, health and the
// first run it failed in). Each answer is bounded and leads with a sentence an agent can act on
// without opening a page.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import {
  ApiError,
  type FailureGroupDetail,
  NetworkError,
  type Run,
  type RunComparison,
  type TestComparison,
  type TestResult,
  type TestrunClient,
  TooLarge,
} from "@testrun/api-client";
import { z } from "zod";

export type FailureApi = Pick<TestrunClient, "getRun" | "compareRuns" | "getFailureGroup" | "getArtifact">;

/** At most this many changed tests in a compare_runs answer (newly failing first)... */
export const maxComparedTests = 50;
/** ...and at most this many characters of a step's JSON (before or after) in it. */
export const maxStepChars = 600;
/** At most this many bytes of an http-response artifact are read, and characters of its body shown. */
export const maxEvidenceBytes = 64 * 1024;
export const maxEvidenceBodyChars = 1_000;

const reading: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const runId = z.string().min(1).describe("The run's id, run_… (as start_run and get_run answer it).");

/** A step's JSON, cut to maxStepChars: the change is usually in the first lines. */
function boundedStep(step: Record<string, unknown> | null): unknown {
  if (!step) return null;
  const json = JSON.stringify(step);
  return json.length <= maxStepChars ? step : { truncated: `${json.slice(0, maxStepChars)}…` };
}

const comparedTest = (t: TestComparison) => ({
  name: t.name,
  change: t.change,
  testCaseId: t.testCaseId,
  testResultId: t.testResultId,
  status: t.status,
  baseStatus: t.baseStatus,
  cause: t.cause,
  failureGroupId: t.failureGroupId,
  ...(t.failingSinceRunId && { failingSinceRunId: t.failingSinceRunId }),
  ...(t.caseVersion !== t.baseCaseVersion && {
    caseVersion: { base: t.baseCaseVersion, now: t.caseVersion },
  }),
  ...(t.stepChanges.length > 0 && {
    stepChanges: t.stepChanges.map((s) => ({
      number: s.number,
      change: s.change,
      before: boundedStep(s.before),
      after: boundedStep(s.after),
    })),
  }),
});

/** One sentence on what the comparison means for someone deciding what to do next. */
export function comparisonExplanation(c: RunComparison): string {
  if (c.baseRule === "none" || !c.base)
    return "There is no base run to compare with (no earlier finished run of the same plan, or name, on this environment): every failure of this run is new to it.";
  const { counts } = c;
  const head = `Against run ${c.base.id} (${c.baseRule === "named" ? "the base asked for" : "the previous run of the same plan on this environment"}): ${plural(counts.newlyFailing, "newly failing test")}, ${counts.stillFailing} still failing, ${counts.fixed} fixed, ${counts.flaky} flaky, ${counts.newTest} new, ${counts.removedTest} removed.`;
  const around = [
    c.changes.baseUrl &&
      `the environment's base URL changed (${c.changes.baseUrl.before} → ${c.changes.baseUrl.after})`,
    c.changes.variablesAdded.length && `variables added: ${c.changes.variablesAdded.join(", ")}`,
    c.changes.variablesRemoved.length && `variables removed: ${c.changes.variablesRemoved.join(", ")}`,
    c.tests.some((t) => t.stepChanges.length) && "some test cases' steps changed (stepChanges)",
  ].filter(Boolean);
  const advice = counts.newlyFailing
    ? " The newly failing tests broke since the base: look at them first (explain_failure)."
    : counts.stillFailing
      ? " Nothing broke since the base: the failures were there before."
      : "";
  return `${head}${around.length ? ` Since then: ${around.join("; ")}.` : ""}${advice}`;
}

/** compare_runs' answer: the counts, the explanation and the changed tests, newly failing first. */
export function comparisonAnswer(c: RunComparison) {
  const changed = c.tests.filter((t) => t.change !== "unchanged");
  return {
    explanation: comparisonExplanation(c),
    run: { id: c.run.id, name: c.run.name, status: c.run.status, url: c.run.url },
    base: c.base ? { id: c.base.id, name: c.base.name, status: c.base.status, url: c.base.url } : null,
    baseRule: c.baseRule,
    counts: c.counts,
    changes: c.changes,
    tests: changed.slice(0, maxComparedTests).map(comparedTest),
    ...(changed.length > maxComparedTests && {
      omittedTests: changed.length - maxComparedTests,
    }),
    compareUrl: c.compareUrl,
  };
}

/** What a failed HTTP step got, from its http-response artifact: status, request, the body's start. */
async function httpEvidence(
  api: FailureApi,
  run: Run,
  test: TestResult,
  signal: AbortSignal,
): Promise<Record<string, unknown> | null> {
  const artifact = test.artifacts?.find((a) => a.kind === "http_response");
  if (!artifact) return null;
  try {
    const { bytes } = await api.getArtifact(
      { runId: run.id, testResultId: test.id, id: artifact.id },
      { maxBytes: maxEvidenceBytes, signal },
    );
    const response = JSON.parse(Buffer.from(bytes).toString("utf8")) as {
      request?: unknown;
      status?: number;
      statusText?: string;
      headers?: { name: string; value?: string }[];
      body?: { text?: string | null; truncated?: boolean };
    };
    const body = response.body?.text ?? null;
    return {
      step: artifact.step,
      request: response.request,
      status: response.status,
      statusText: response.statusText,
      contentType: response.headers?.find((h) => h.name === "content-type")?.value ?? null,
      body: body && body.length > maxEvidenceBodyChars ? `${body.slice(0, maxEvidenceBodyChars)}…` : body,
      url: artifact.url,
    };
  } catch (error) {
    if (signal.aborted) throw error;
    const reason =
      error instanceof TooLarge
        ? `larger than ${maxEvidenceBytes} bytes`
        : error instanceof ApiError || error instanceof NetworkError || error instanceof SyntaxError
          ? error.message
          : undefined;
    if (reason === undefined) throw error;
    return { url: artifact.url, unread: reason };
  }
}

const groupSummary = (detail: FailureGroupDetail) => {
  const g = detail.failureGroup;
  return {
    id: g.id,
    state: g.state,
    occurrences: g.occurrences,
    casesAffected: g.casesAffected,
    how: `${g.stepKind} ${g.action} ${g.target}: ${g.message} (${g.cause})`,
    firstSeen: g.firstSeen && {
      runId: g.firstSeen.runId,
      at: g.firstSeen.at,
      testCaseName: g.firstSeen.testCaseName,
    },
    recentOccurrences: detail.occurrences.slice(0, 5).map((o) => ({
      runId: o.runId,
      testCaseName: o.testCaseName,
      at: o.at,
      summary: o.summary,
    })),
    cases: detail.cases.slice(0, 10).map((c) => ({ name: c.name, occurrences: c.occurrences, open: c.open })),
    ...(detail.cases.length > 10 && { moreCases: detail.cases.length - 10 }),
  };
};

/** What explain_failure leads with: what kind of failure this is and where to look. */
function verdict(
  test: TestResult,
  compared: TestComparison | undefined,
  comparison: RunComparison | undefined,
  group: ReturnType<typeof groupSummary> | undefined,
  firstFailedRunId: string | undefined,
): string {
  if (test.status !== "FAILED")
    return `The test did not fail: it is ${test.status}${test.flaky ? " (passed on retry: flaky)" : ""}.`;
  const parts: string[] = [];
  const system = ["browser", "executor_lost", "no_executor"].includes(test.cause ?? "");
  parts.push(
    system
      ? `It failed by the system's cause (${test.cause}), not the test's: run it again rather than change the test or the application.`
      : `It failed with cause ${test.cause ?? "unknown"}: ${test.summary}`,
  );
  if (compared?.change === "newly_failing" && comparison?.base)
    parts.push(
      `It is a new failure: it ${compared.baseStatus ?? "did not fail"} in the base run ${comparison.base.id}${
        compared.stepChanges.length
          ? `, and ${plural(compared.stepChanges.length, "step")} of it changed since`
          : ""
      }.`,
    );
  else if (compared?.change === "still_failing")
    parts.push(
      `It was already failing in the base run${firstFailedRunId ? `, since run ${firstFailedRunId}` : ""}: not caused by what changed since.`,
    );
  else if (compared?.change === "new_test") parts.push("It is a new test: it was not in the base run.");
  else if (!comparison?.base) parts.push("There is no base run to compare it with.");
  if (group)
    parts.push(
      group.casesAffected > 1
        ? `Its failure group has ${plural(group.occurrences, "occurrence")} in ${group.casesAffected} test cases${group.firstSeen ? ` since run ${group.firstSeen.runId}` : ""}: one shared cause is likely, fix it once.`
        : `Its failure group has ${plural(group.occurrences, "occurrence")}, all of this test case.`,
    );
  return parts.join(" ");
}

/** explain_failure's answer. Four requests at most: the run, its comparison, the group, the evidence. */
export async function explainFailure(api: FailureApi, id: string, testResultId: string, signal: AbortSignal) {
  const run = await api.getRun(id, undefined, { signal });
  const test = run.tests.find((t) => t.id === testResultId);
  if (!test)
    throw new ApiError(404, { error: `no test ${testResultId} in run ${id}`, code: "not_found" }, undefined);
  let comparison: RunComparison | undefined;
  if (run.finished) {
    try {
      comparison = await api.compareRuns(run.id, undefined, { signal });
    } catch (error) {
      if (!(error instanceof ApiError || error instanceof NetworkError) || signal.aborted) throw error;
    }
  }
  const compared = comparison?.tests.find((t) => t.testResultId === test.id);
  const detail = test.failureGroup
    ? await api.getFailureGroup(test.failureGroup.id, { limit: 5 }, { signal })
    : undefined;
  const group = detail && groupSummary(detail);
  const evidence = test.status === "FAILED" ? await httpEvidence(api, run, test, signal) : null;
  // The first run of its current failures: still failing says since when; a new one began here.
  const firstFailedRunId =
    compared?.failingSinceRunId ??
    (test.status === "FAILED" && (compared?.change === "newly_failing" || compared?.change === "new_test")
      ? run.id
      : undefined);
  const health = (test as { health?: unknown }).health ?? null;
  const attempts = test.attempts ?? [];
  return {
    verdict: verdict(test, compared, comparison, group, firstFailedRunId),
    test: {
      id: test.id,
      name: test.name,
      status: test.status,
      cause: test.cause ?? null,
      summary: test.summary,
      failedStep: test.failedStep ?? null,
      flaky: test.flaky ?? false,
      retries: test.retries ?? 0,
      url: test.url,
    },
    attempts: attempts.slice(-10).map((a) => ({
      number: a.number,
      status: a.status,
      cause: a.cause,
      failedStep: a.failedStep,
      summary: a.summary,
      executor: a.executor,
      durationMs: a.durationMs,
    })),
    evidence: {
      httpResponse: evidence,
      screenshots: (test.artifacts ?? []).filter((a) => a.kind === "screenshot").map((a) => a.name),
    },
    failureGroup: group ?? null,
    comparison: comparison
      ? {
          baseRunId: comparison.base?.id ?? null,
          baseRule: comparison.baseRule,
          change: compared?.change ?? null,
          ...(compared &&
            compared.stepChanges.length > 0 && { stepChanges: comparedTest(compared).stepChanges }),
          compareUrl: comparison.compareUrl,
        }
      : null,
    firstFailedRunId: firstFailedRunId ?? null,
    health,
    run: { id: run.id, name: run.name, status: run.status, url: run.url },
  };
}

/**
 * Registers compare_runs and explain_failure; `call` turns the API's refusals into tool errors as
 * the other tools do.
 */
export function registerFailureTools(
  server: McpServer,
  api: FailureApi,
  call: <T>(run: () => Promise<T>) => Promise<CallToolResult>,
): void {
  server.registerTool(
    "compare_runs",
    {
      title: "Compare a run with its base",
      description: `Compare a run with a base run: by default the previous finished run of the same test plan (or name) on the same environment, or the one given as base. Answers an explanation sentence, the counts (newlyFailing, fixed, stillFailing, flaky, newTest, removedTest, unchanged), what changed around the tests (the environment's base URL, variable names, the selection's cases), and the tests that changed, newly failing first, each with its status then and now, its cause, its failure group and the steps that changed (at most ${maxComparedTests} tests; omittedTests says how many more). Use it to tell whether a failure is new (caused by what changed) or was already there. One request of the API.`,
      inputSchema: z.strictObject({
        runId,
        base: z
          .string()
          .min(1)
          .optional()
          .describe("A run id to compare with instead of the previous run (run_…, of this project)."),
      }),
      annotations: reading,
    },
    async ({ runId: id, base }, { signal }) =>
      call(async () => comparisonAnswer(await api.compareRuns(id, base, { signal }))),
  );

  server.registerTool(
    "explain_failure",
    {
      title: "Explain a failed test",
      description:
        "Explain why one test of a run failed, to decide what to do without opening a page: a verdict sentence first (new against the base run, or already failing and since which run; the test's own cause or the system's; whether many test cases share the failure), then the test (cause, summary, failed step), its attempts, the evidence (for a failed HTTP step the response it got: status, request, content type and the body's first 1,000 characters; the names of screenshots), its failure group (occurrences, test cases affected, the run it was first seen in, its latest occurrences), how it compares with the base run (with the steps that changed), firstFailedRunId (the first run of its current failures) and its test case's health in the environment when known. testResultId is a test's id (tr_…) from get_run. At most four requests of the API.",
      inputSchema: z.strictObject({
        runId,
        testResultId: z
          .string()
          .min(1)
          .describe("The failed test's id in that run (tr_…, a test's id in get_run)."),
      }),
      annotations: reading,
    },
    async ({ runId: id, testResultId }, { signal }) =>
      call(() => explainFailure(api, id, testResultId, signal)),
  );
}
