// The Testrun MCP tools (docs/agents.md, "MCP: the API as tools"): one definition for both ways of
// serving them, the gateway's POST /v1/mcp (services/gateway/src/mcp/) and `testrun mcp` over stdio
// (services/testrun-cli/src/mcp/stdio.ts). A package of their own, so that the gateway serves them
// without depending on the CLI. Each tool is one request of the /v1 REST API with its semantics
// (docs/rest-api.md), made through a TestrunApi: the typed REST client over HTTP (stdio), or the
// gateway's own route handlers (remote). Results are compact JSON text; a refusal of the API is a
// tool result with isError, carrying the API's message, code and extras, never a protocol error.
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import {
  ApiError,
  describeFailure,
  failureScreenshot,
  formatBytes,
  NetworkError,
  type Run,
  startedRunOf,
  type TestrunClient,
  TooLarge,
  version,
} from "@testrun/api-client";
import { z } from "zod";
import { registerFailureTools } from "./failure-tools.js";

/** What the tools need of the REST API: the typed client has exactly these methods. */
export type TestrunApi = Pick<
  TestrunClient,
  | "listEnvironments"
  | "listTestPlans"
  | "listTestCases"
  | "startRun"
  | "getRun"
  | "cancelRun"
  | "rerunRun"
  | "getArtifact"
  | "compareRuns"
  | "getFailureGroup"
  | "getTestCaseHistory"
>;

/** At most this many screenshots come back as images with one get_run result... */
export const maxImages = 3;
/** ...and at most this many bytes of them together (4 MiB as the base64 the protocol carries). */
export const maxImageBytes = 3 * 1024 * 1024;

/** What the server tells a model once, at initialization: how the tools fit together. */
export const serverInstructions = `Testrun runs HTTP test cases against a project's environments and reports the verdict.
To test something: list_test_plans (or list_test_cases), then start_run, then get_run with waitSeconds 30 until finished is true.
Give people the run's url. Each test of a run spends one of the project's credits.
Once a run is finished, get_run also returns the screenshot of each failed browser test (what the page showed when it failed) as an image; its screenshots field says which test each image is of.
A test may take several attempts (its retries): flaky true means it PASSED only on retry, so report it as flaky, not simply passed; cause says why a FAILED test's last attempt failed (browser, executor_lost and no_executor are the system's fault, not the application's), and attempts lists each attempt with its status, cause, summary and failed step.
Each test of a run carries its test case's health (health.state: new_failure, failing since failingSince, flaky with failureRate "count of sample", stable, unknown) and quarantined: a quarantined test's failure does not fail the run (quarantinedFailures counts them; the reason is health.quarantine.reason): report it as a known, quarantined failure. get_test_case_history tells whether a failure is new and since when a test fails.
When a run failed, compare_runs says which failures are new against the previous run (newly failing: caused by what changed) and which were already there; explain_failure says why one test failed (its attempts, cause, the HTTP response it got, its failure group shared with other tests, and the first run it failed in): report new failures first.
Every tool call counts as one request against the API key's rate limit (60 a minute by default, shared with the key's REST requests): wait with get_run's waitSeconds rather than calling it in a quick loop.
On a rate_limited error wait retryAfterSeconds; on ambiguous_name retry with one of the candidates' ids; on insufficient_credits stop and report required and available.`;

const text = (value: unknown): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
});

const failure = (value: Record<string, unknown>): CallToolResult => ({ ...text(value), isError: true });

/**
 * A failed call as a tool error: the API's status, message, code and extras (402 required and
 * available, 409 candidates, 429 retryAfterSeconds, a 500's run id and url), or, without an answer,
 * what is known. `idempotencyKey` is the key a start was sent with: repeating the call with it is safe.
 */
function errorResult(error: unknown, idempotencyKey?: string): CallToolResult {
  if (error instanceof ApiError) {
    const started = startedRunOf(error);
    return failure({
      status: error.status,
      ...error.body,
      ...(error.retryAfterSeconds !== undefined && { retryAfterSeconds: error.retryAfterSeconds }),
      ...(started && {
        hint: `the run ${started.id} was started: follow it with get_run, do not start again`,
      }),
    });
  }
  if (error instanceof NetworkError) {
    return failure({
      error: `no answer from the Testrun API: ${error.message}`,
      code: "no_answer",
      ...(idempotencyKey &&
        error.maybeSent && {
          hint: `the run may have started: call again with idempotencyKey "${idempotencyKey}" to get that run instead of starting another`,
        }),
    });
  }
  throw error;
}

const pngSignature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * A finished run as get_run answers it: its JSON, then the screenshot of each failed test (its
 * failure screenshot, else its first) as image content, at most maxImages of them and maxImageBytes
 * together. When any failed test has a screenshot, the JSON gains `screenshots`: one entry per such
 * test, in run order, saying whether its image follows (in that order) or why not. Each image is one
 * request of the API (over stdio; in the gateway, none more).
 */
async function withScreenshots(api: TestrunApi, run: Run, signal: AbortSignal): Promise<CallToolResult> {
  const failed = run.finished ? run.tests.filter((test) => test.status === "FAILED") : [];
  const shots = failed.flatMap((test) => {
    const screenshot = failureScreenshot(test);
    return screenshot ? [{ test, screenshot }] : [];
  });
  if (!shots.length) return text(run);
  const notes: Record<string, unknown>[] = [];
  const images: CallToolResult["content"] = [];
  let bytes = 0;
  for (const { test, screenshot } of shots) {
    const note = {
      testResultId: test.id,
      test: test.name,
      artifactId: screenshot.id,
      name: screenshot.name,
      step: screenshot.step,
    };
    const size = Number(screenshot.size);
    let reason: string | undefined;
    if (images.length >= maxImages) reason = `only ${maxImages} screenshots come back with one result`;
    else if (screenshot.contentType !== "image/png") reason = `not a PNG (${screenshot.contentType})`;
    else if (!(size <= maxImageBytes - bytes))
      reason = `its ${formatBytes(size)} would pass the ${formatBytes(maxImageBytes)} of images one result carries`;
    if (!reason) {
      try {
        const answer = await api.getArtifact(
          { runId: run.id, testResultId: test.id, id: screenshot.id },
          { maxBytes: size, signal },
        );
        if (pngSignature.every((byte, i) => answer.bytes[i] === byte)) {
          images.push({
            type: "image",
            data: Buffer.from(answer.bytes).toString("base64"),
            mimeType: "image/png",
          });
          bytes += answer.bytes.byteLength;
        } else {
          reason = "its bytes are not a PNG";
        }
      } catch (error) {
        if (signal.aborted) throw error;
        if (error instanceof TooLarge) reason = `the API sent more than the ${size} bytes it is listed with`;
        else if (error instanceof ApiError || error instanceof NetworkError) reason = describeFailure(error);
        else throw error;
      }
    }
    notes.push(reason ? { ...note, attached: false, reason } : { ...note, attached: true });
  }
  return { content: [{ type: "text", text: JSON.stringify({ ...run, screenshots: notes }) }, ...images] };
}

/** Runs one call of the API, turning its refusals into tool errors; `result` shapes its answer. */
async function call<T>(
  run: () => Promise<T>,
  idempotencyKey?: string,
  result: (value: T) => CallToolResult | Promise<CallToolResult> = text,
): Promise<CallToolResult> {
  let value: T;
  try {
    value = await run();
  } catch (error) {
    return errorResult(error, idempotencyKey);
  }
  return result(value);
}

const reading: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
/** Starting a run spends credits and runs tests against the environment, a system outside Testrun. */
const starting: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
};

const runId = z
  .string()
  .min(1)
  .describe("The run's id, run_… (as start_run, rerun_run and get_run answer it).");

const idempotencyKey = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, "1 to 255 visible ASCII characters")
  .optional()
  .describe(
    "Leave out normally. To repeat a call that got no answer, pass the idempotencyKey its error named: the repeat then returns the run the first call started instead of starting (and paying for) another.",
  );

const nonEmptyList = (what: string) => z.array(z.string().min(1)).min(1).max(500).optional().describe(what);

const startRunInput = z.strictObject({
  testPlan: z
    .string()
    .min(1)
    .optional()
    .describe("A test plan's name or id (list_test_plans): runs its enabled test cases, in plan order."),
  tags: nonEmptyList(
    "Tags: runs every enabled test case having any of them (ignoring case); more than 500 such test cases is refused.",
  ),
  testCaseIds: nonEmptyList("Test case ids (tc_…, list_test_cases): runs exactly these, enabled or not."),
  environment: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The environment's name or id (list_environments). Leave out for the project's default environment.",
    ),
  name: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe("A name for the run. Leave out to name it after what it runs."),
  retries: z
    .int()
    .min(0)
    .max(3)
    .optional()
    .describe(
      "How many times a failed test is run again (0 to 3), in place of the plan's and the test cases' own retries; a test that passes on retry is PASSED and flaky. Leave out to use theirs.",
    ),
  idempotencyKey,
});

const noInput = z.strictObject({});

const listTestCasesInput = z.strictObject({
  tags: z
    .array(z.string().min(1))
    .max(500)
    .optional()
    .describe("Only test cases having any of these tags (ignoring case)."),
  search: z
    .string()
    .min(1)
    .optional()
    .describe("Only test cases whose name contains this text (ignoring case). Combines with tags."),
});

const runInput = z.strictObject({ runId });

const getRunInput = z.strictObject({
  runId,
  waitSeconds: z
    .number()
    .int()
    .min(1)
    .max(30)
    .optional()
    .describe(
      "Wait up to this many seconds (1 to 30) for the run to finish before answering; one request however long it waits. Leave out to read it at once.",
    ),
});

const historyInput = z.strictObject({
  testCaseId: z.string().min(1).describe("The test case's id, tc_… (a run's tests carry it as testCaseId)."),
  environment: z
    .string()
    .min(1)
    .optional()
    .describe("Only results in this environment (its name or id). Leave out for every environment."),
  limit: z
    .int()
    .min(1)
    .max(100)
    .optional()
    .describe("How many results, newest first (1 to 100; 50 when left out)."),
  cursor: z.string().min(1).optional().describe("nextCursor of the previous answer, to read older results."),
});

const rerunRunInput = z.strictObject({
  runId,
  failedOnly: z
    .boolean()
    .optional()
    .describe("true: only the tests that FAILED (fails when none did); false or left out: every test."),
  idempotencyKey,
});

/** The result of a start: the run, marked when it is the run of an earlier call with the key. */
const startedJson = (run: Run, replayed: boolean) => (replayed ? { ...run, replayed: true } : run);

/**
 * Registers every tool on `server`, each calling `api`. `signal` of a call (the client cancelled
 * it, or went away) reaches the request it makes.
 */
export function registerTools(server: McpServer, api: TestrunApi): void {
  server.registerTool(
    "list_environments",
    {
      title: "List environments",
      description:
        "List the project's environments, the deployed systems tests run against: id, name, baseUrl, isDefault. start_run takes one by name or id; without one a run uses the default environment.",
      inputSchema: noInput,
      annotations: reading,
    },
    async (_args, { signal }) => call(async () => ({ environments: await api.listEnvironments({ signal }) })),
  );

  server.registerTool(
    "list_test_plans",
    {
      title: "List test plans",
      description:
        "List the project's test plans (named sets of test cases): id, name, description, testCaseCount. Run one with start_run and testPlan set to its name or id.",
      inputSchema: noInput,
      annotations: reading,
    },
    async (_args, { signal }) => call(async () => ({ testPlans: await api.listTestPlans({ signal }) })),
  );

  server.registerTool(
    "list_test_cases",
    {
      title: "List test cases",
      description:
        "List the project's test cases: id, name, tags, enabled. Oldest first, at most 500; truncated is true when more matched (narrow the filters). Disabled test cases are listed too: a plan or tags never run them, testCaseIds does.",
      inputSchema: listTestCasesInput,
      annotations: reading,
    },
    async ({ tags, search }, { signal }) =>
      call(() => api.listTestCases({ ...(tags && { tags }), ...(search && { search }) }, { signal })),
  );

  server.registerTool(
    "start_run",
    {
      title: "Start a test run",
      description:
        "Start a test run; it is returned at once, RUNNING with finished false, with its id and url. Give exactly one of testPlan, tags and testCaseIds. Spends one of the project's credits per test, taken at once (insufficient_credits, with required and available, when short: nothing starts). Then call get_run with waitSeconds 30 until finished is true. A name matching several items fails with ambiguous_name and candidates: retry with one of those ids.",
      inputSchema: startRunInput,
      annotations: starting,
    },
    async ({ idempotencyKey: given, ...body }, { signal }) => {
      const key = given ?? randomUUID();
      return call(async () => {
        const { run, replayed } = await api.startRun(body, { idempotencyKey: key, signal });
        return startedJson(run, replayed);
      }, key);
    },
  );

  server.registerTool(
    "get_run",
    {
      title: "Read a run",
      description:
        "Read a run: status (RUNNING, then PASSED, FAILED or SKIPPED), finished, the counts, skipReason, its url (give it to people) and its tests, each with a one-line summary of what failed and its artifacts, flaky (true: it passed only on retry), cause (why a FAILED test failed: assertion, locator, timeout, network, egress_refused, environment_unreachable, or the system's browser, executor_lost, no_executor) and attempts (each with its number, status, cause, summary, failed step, executor and artifacts); flakyTests counts the tests that passed on retry; health (its test case's state: new_failure, failing since a run, flaky with its failure rate, stable, unknown; quarantined with health.quarantine.reason) and quarantined (true: its failure does not fail the run; quarantinedFailures counts them, and the run can be PASSED with them). With waitSeconds the answer comes as soon as the run is finished, or after that many seconds with the run as it is then: call again while finished is false. Runs usually take seconds to minutes. Once the run is finished, the screenshot of each failed browser test (the page when it failed) follows the JSON as an image, at most 3 images and 3 MiB: `screenshots` in the JSON lists those tests in order, each attached or with the reason it was left out.",
      inputSchema: getRunInput,
      annotations: reading,
    },
    async ({ runId: id, waitSeconds }, { signal }) =>
      call(
        () => api.getRun(id, waitSeconds, { signal }),
        undefined,
        (run) => withScreenshots(api, run, signal),
      ),
  );

  server.registerTool(
    "get_test_case_history",
    {
      title: "Read a test case's history and health",
      description:
        "A test case's results, newest first (run, environment, case version, status, cause, duration, who started the run, quarantined), and its health in each environment: state (stable, flaky, failing, new_failure, quarantined, or unknown with too few results), failureRate and flipRate (count of sample with a 95% interval low to high; enoughResults false when the sample is too small to say much), failingSince (the run its current failures began in), lastFailure, median and p90 durations, and a lasting quarantine with its reason. Use it to say whether a failure is new or known, and since when a test fails. Paged: pass nextCursor as cursor for older results.",
      inputSchema: historyInput,
      annotations: reading,
    },
    async ({ testCaseId, environment, limit, cursor }, { signal }) =>
      call(() =>
        api.getTestCaseHistory(
          testCaseId,
          {
            ...(environment && { environment }),
            ...(limit !== undefined && { limit }),
            ...(cursor && { cursor }),
          },
          { signal },
        ),
      ),
  );

  server.registerTool(
    "cancel_run",
    {
      title: "Cancel a run",
      description:
        "Stop a run in progress: its tests not yet executed do not run and their credits are given back; a test being executed is discarded. Returns the run, then finished (SKIPPED with skipReason cancelled unless some test had already passed or failed). Fails with run_finished when the run had already finished.",
      inputSchema: runInput,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ runId: id }, { signal }) => call(() => api.cancelRun(id, { signal })),
  );

  server.registerTool(
    "rerun_run",
    {
      title: "Rerun a run's tests",
      description:
        "Start a new run, on the same environment, of a run's test cases as they are now: only those whose test FAILED (failedOnly true) or all of them. Spends one credit per test, as start_run does, and returns the new run at once; follow it with get_run.",
      inputSchema: rerunRunInput,
      annotations: starting,
    },
    async ({ runId: id, failedOnly, idempotencyKey: given }, { signal }) => {
      const key = given ?? randomUUID();
      return call(async () => {
        const { run, replayed } = await api.rerunRun(id, failedOnly ?? false, {
          idempotencyKey: key,
          signal,
        });
        return startedJson(run, replayed);
      }, key);
    },
  );

  registerFailureTools(server, api, (run) => call(run));
}

/** A server with every tool, calling `api`; its version is this package's. */
export function testrunMcpServer(api: TestrunApi): McpServer {
  const server = new McpServer(
    { name: "testrun", title: "Testrun", version },
    { instructions: serverInstructions },
  );
  registerTools(server, api);
  return server;
}

// What an API handed to the tools throws and answers (the gateway's in-process API makes them too).
export type * from "@testrun/api-client";
export { ApiError, NetworkError, TooLarge };
