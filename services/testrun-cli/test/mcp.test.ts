// The MCP tools (@testrun/mcp-tools) as `testrun mcp` serves them, driven by the official SDK's client
// over an in-memory transport, against a scripted gateway: what each tool sends, and how failures
// the real system rarely shows (no answer, a start not read back, 429) come back as tool errors.
// The real gateway and both transports are in test/mcp.e2e.test.ts.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { testrunMcpServer } from "@testrun/mcp-tools";
import { expect } from "chai";
import { FakeGateway, fakeRun } from "./fake-gateway.js";

describe("the MCP tools over the REST client", () => {
  let gateway: FakeGateway;
  let client: Client;

  beforeEach(async () => {
    gateway = await FakeGateway.start();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await testrunMcpServer(gateway.client()).connect(serverSide);
    client = new Client({ name: "unit", version: "1" });
    await client.connect(clientSide);
  });
  afterEach(async () => {
    await client.close();
    await gateway.stop();
  });

  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    const [content] = result.content;
    return {
      isError: result.isError === true,
      json: JSON.parse(content?.type === "text" ? content.text : ""),
    };
  };

  it("sends each tool's REST request: filters as query parameters, a wait as ?wait, a rerun's failedOnly", async () => {
    gateway.answer = (request) =>
      request.url.startsWith("/v1/test-cases")
        ? { status: 200, body: { testCases: [], truncated: false } }
        : {
            status: request.method === "POST" && request.url.endsWith("/rerun") ? 201 : 200,
            body: fakeRun(),
          };
    await call("list_test_cases", { tags: ["smoke", "auth"], search: "log in" });
    await call("get_run", { runId: "run_1", waitSeconds: 30 });
    await call("get_run", { runId: "run_1" });
    await call("cancel_run", { runId: "run_1" });
    const rerun = await call("rerun_run", { runId: "run_1", failedOnly: true });
    expect(rerun).to.deep.equal({ isError: false, json: fakeRun() });
    expect(gateway.requests.map((r) => `${r.method} ${r.url} ${r.body}`)).to.deep.equal([
      "GET /v1/test-cases?tag=smoke&tag=auth&search=log+in ",
      "GET /v1/runs/run_1?wait=30 ",
      "GET /v1/runs/run_1 ",
      "POST /v1/runs/run_1/cancel {}",
      'POST /v1/runs/run_1/rerun {"failedOnly":true}',
    ]);
    expect(gateway.requests[4]?.headers["idempotency-key"]).to.match(/^[0-9a-f-]{36}$/);
  });

  it("answers a run's retried tests with flaky, cause and every attempt, as the API gives them", async () => {
    const run = fakeRun("FAILED");
    const [health, login] = run.tests;
    if (!health || !login) throw new Error("two tests");
    const attempt = (
      number: number,
      status: "PASSED" | "FAILED",
      cause: "network" | "executor_lost" | null,
    ) => ({
      number,
      status,
      startedAt: "2026-11-22T10:15:30.123Z",
      finishedAt: "2026-11-22T10:15:30.923Z",
      durationMs: 800,
      summary: cause ? `failed: ${cause}` : "1 step passed",
      failedStep: cause === "network" ? 1 : null,
      stepResults: [],
      cause,
      executor: `executor-${number}`,
      artifacts: [],
    });
    Object.assign(health, {
      flaky: true,
      attempts: [attempt(1, "FAILED", "network"), attempt(2, "PASSED", null)],
    });
    Object.assign(login, {
      flaky: false,
      cause: "executor_lost",
      attempts: [attempt(1, "FAILED", "executor_lost"), attempt(2, "FAILED", "executor_lost")],
    });
    gateway.answer = () => ({ status: 200, body: { ...run, flakyTests: 1 } });
    const { isError, json } = await call("get_run", { runId: "run_1" });
    expect(isError).to.equal(false);
    expect(json.flakyTests).to.equal(1);
    expect(json.tests[0]).to.include({ name: "health answers", status: "PASSED", flaky: true });
    expect(
      json.tests[0].attempts.map((a: { status: string; cause: string | null }) => [a.status, a.cause]),
    ).to.deep.equal([
      ["FAILED", "network"],
      ["PASSED", null],
    ]);
    expect(json.tests[1]).to.include({ status: "FAILED", flaky: false, cause: "executor_lost" });
    expect(json.tests[1].attempts).to.have.length(2);
    const { tools } = await client.listTools();
    const getRun = tools.find((tool) => tool.name === "get_run");
    expect(getRun?.description).to.contain("flaky (true: it passed only on retry)");
    expect(client.getInstructions()).to.contain("report it as flaky, not simply passed");
  });

  it("reads a test case's history and health with get_test_case_history, paged and by environment", async () => {
    const history = {
      entries: [
        { testResultId: "tr_9", runId: "run_9", status: "FAILED", cause: "assertion", quarantined: true },
      ],
      nextCursor: "older",
      health: [{ testCaseId: "tc_1", environmentId: "env_1", state: "quarantined", judged: "failing" }],
    };
    gateway.answer = (request) =>
      request.url.includes("cursor=bad")
        ? { status: 400, body: { error: "cursor is not valid", code: "invalid_request" } }
        : { status: 200, body: history };
    const read = await call("get_test_case_history", {
      testCaseId: "tc_1",
      environment: "staging",
      limit: 5,
    });
    expect(read).to.deep.equal({ isError: false, json: history });
    const refused = await call("get_test_case_history", { testCaseId: "tc_1", cursor: "bad" });
    expect(refused).to.deep.equal({
      isError: true,
      json: { status: 400, error: "cursor is not valid", code: "invalid_request" },
    });
    // Past 100 is refused by the tool before anything is sent.
    const tooMany = (await client.callTool({
      name: "get_test_case_history",
      arguments: { testCaseId: "tc_1", limit: 101 },
    })) as CallToolResult;
    expect(tooMany.isError).to.equal(true);
    expect(gateway.requests.map((r) => `${r.method} ${r.url}`)).to.deep.equal([
      "GET /v1/test-cases/tc_1/history?environment=staging&limit=5",
      "GET /v1/test-cases/tc_1/history?cursor=bad",
    ]);
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === "get_test_case_history");
    expect(tool?.annotations).to.deep.equal({ readOnlyHint: true, openWorldHint: false });
    expect(tools.find((t) => t.name === "get_run")?.description).to.contain(
      "quarantined (true: its failure does not fail the run",
    );
    expect(client.getInstructions()).to.contain("report it as a known, quarantined failure");
  });

  it("starts with a new Idempotency-Key per call, or the one given, and marks a replayed answer", async () => {
    gateway.answer = (_request, index) => ({
      status: 201,
      body: fakeRun(),
      headers: index === 2 ? { "idempotency-replayed": "true" } : ({} as Record<string, string>),
    });
    await call("start_run", { testPlan: "Smoke" });
    await call("start_run", { testPlan: "Smoke" });
    const replayed = await call("start_run", { testPlan: "Smoke", idempotencyKey: "my-key-1" });
    expect(replayed.json).to.deep.equal({ ...fakeRun(), replayed: true });
    const keys = gateway.requests.map((r) => r.headers["idempotency-key"]);
    expect(keys[0]).to.not.equal(keys[1]);
    expect(keys[2]).to.equal("my-key-1");
    expect(JSON.parse(gateway.requests[0]?.body ?? "")).to.deep.equal({ testPlan: "Smoke" });
  });

  it("start_run passes retries of 0 to 3 on to POST /v1/runs and refuses others before sending anything", async () => {
    gateway.answer = () => ({ status: 201, body: fakeRun() });
    await call("start_run", { testPlan: "Smoke", retries: 2 });
    expect(JSON.parse(gateway.requests[0]?.body ?? "")).to.deep.equal({ testPlan: "Smoke", retries: 2 });
    for (const retries of [4, -1, 1.5, "x"]) {
      const refused = (await client.callTool({
        name: "start_run",
        arguments: { testPlan: "Smoke", retries },
      })) as CallToolResult;
      const [content] = refused.content;
      expect(refused.isError, JSON.stringify(retries)).to.equal(true);
      expect(content?.type === "text" && content.text).to.contain("retries");
    }
    expect(gateway.requests, "nothing more was sent").to.have.length(1);
  });

  it("says a start that got no answer may have started, naming the key that repeats it safely", async () => {
    gateway.answer = () => "drop";
    const dropped = await call("start_run", { tags: ["smoke"] });
    const key = gateway.requests[0]?.headers["idempotency-key"];
    expect(dropped.isError).to.equal(true);
    expect(dropped.json.code).to.equal("no_answer");
    expect(dropped.json.hint).to.equal(
      `the run may have started: call again with idempotencyKey "${key}" to get that run instead of starting another`,
    );
    // A read without an answer has nothing to repeat safely.
    const read = await call("get_run", { runId: "run_1" });
    expect(read.json).to.not.have.property("hint");
  });

  it("gives a start that was not read back (500 with its id) as the run to follow, and a 429's Retry-After", async () => {
    const url = "http://console.example/projects/prj_1/runs/run_9";
    gateway.answer = (request) =>
      request.method === "POST"
        ? {
            status: 500,
            body: {
              error: "the run was started but could not be read back; follow it by its id",
              code: "internal",
              id: "run_9",
              url,
            },
          }
        : {
            status: 429,
            body: { error: "rate limit exceeded", code: "rate_limited" },
            headers: { "retry-after": "17" },
          };
    expect((await call("start_run", { testPlan: "Smoke" })).json).to.deep.equal({
      status: 500,
      error: "the run was started but could not be read back; follow it by its id",
      code: "internal",
      id: "run_9",
      url,
      hint: "the run run_9 was started: follow it with get_run, do not start again",
    });
    expect((await call("list_test_plans")).json).to.deep.equal({
      status: 429,
      error: "rate limit exceeded",
      code: "rate_limited",
      retryAfterSeconds: 17,
    });
  });

  it("leaves out a screenshot the API refuses or that is not a PNG, saying why, and is no tool error", async () => {
    const run = fakeRun("FAILED");
    run.tests = [0, 1].map((i) => ({
      ...(run.tests[1] as (typeof run.tests)[number]),
      id: `tr_${i}`,
      name: `page ${i}`,
      artifacts: [
        {
          id: `art_${i}`,
          kind: "screenshot" as const,
          name: "failure",
          contentType: "image/png",
          size: 12,
          step: 1,
          url: `http://api.example/v1/runs/run_1/tests/tr_${i}/artifacts/art_${i}`,
        },
      ],
    }));
    gateway.answer = (request) => {
      if (request.url === "/v1/runs/run_1/tests/tr_0/artifacts/art_0")
        return { status: 404, body: { error: "no such artifact", code: "not_found" } };
      if (request.url === "/v1/runs/run_1/tests/tr_1/artifacts/art_1") return { status: 200, body: "<html>" };
      return { status: 200, body: run };
    };
    const result = (await client.callTool({
      name: "get_run",
      arguments: { runId: "run_1" },
    })) as CallToolResult;
    expect(result.isError ?? false).to.equal(false);
    expect(result.content).to.have.length(1);
    const [content] = result.content;
    const json = JSON.parse(content?.type === "text" ? content.text : "");
    expect(
      json.screenshots.map((s: { attached: boolean; reason: string }) => [s.attached, s.reason]),
    ).to.deep.equal([
      [false, "HTTP 404 not_found: no such artifact"],
      [false, "its bytes are not a PNG"],
    ]);
    expect(gateway.requests.map((r) => r.url)).to.deep.equal([
      "/v1/runs/run_1",
      "/v1/runs/run_1/tests/tr_0/artifacts/art_0",
      "/v1/runs/run_1/tests/tr_1/artifacts/art_1",
    ]);
  });
});
