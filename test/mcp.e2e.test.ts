// The MCP server (docs/agents.md, "MCP: the API as tools"): the Testrun tools over the gateway's POST /v1/mcp
// (Streamable HTTP) and over stdio (`testrun mcp`), driven by the official TypeScript SDK's client
// and by the Python `mcp` package from PyPI, against the real gateway with every service a real
// process. Tool calls do what their REST requests do, with the same key, limits and refusals.
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { version } from "@testrun/api-client";
import {
  addMember,
  createCliContext,
  createEnvironment,
  createKey,
  createOrganization,
  createProject,
  removeMember,
} from "@testrun/cli";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { eventually, type GatewayProcess, repoRoot } from "@testrun/testing";
import { expect } from "chai";
import { seedDemo } from "../scripts/demo/seed.js";
import type { System } from "../scripts/system.js";
import { HeldTarget } from "./held-target.js";
import { expectDocumented } from "./openapi-check.js";
import {
  addCases,
  gatewayOnSharedSystem,
  getCase,
  newProject,
  Pipeline,
  type RunBody,
  sharedTestSystem,
} from "./pipeline.js";
import { cliEnv, runCli, testrunBin } from "./testrun-cli.js";

const exec = promisify(execFile);

const toolNames = [
  "cancel_run",
  "compare_runs",
  "explain_failure",
  "get_run",
  "get_test_case_history",
  "list_environments",
  "list_test_cases",
  "list_test_plans",
  "rerun_run",
  "start_run",
];

/** An MCP client connected to the gateway's /v1/mcp with these headers. */
async function remote(gatewayUrl: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: "testrun-e2e", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL("/v1/mcp", gatewayUrl), { requestInit: { headers } }),
  );
  return client;
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

interface ToolAnswer {
  isError: boolean;
  json: Record<string, unknown>;
}

/** Calls a tool; its one text content parsed as JSON. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.content, JSON.stringify(result)).to.have.length(1);
  const [content] = result.content;
  if (content?.type !== "text") throw new Error(`not text: ${JSON.stringify(result)}`);
  return { isError: result.isError === true, json: JSON.parse(content.text) as Record<string, unknown> };
}

/** Calls a tool that must succeed. */
async function tool<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<T> {
  const { isError, json } = await call(client, name, args);
  expect(isError, `${name}: ${JSON.stringify(json)}`).to.equal(false);
  return json as T;
}

/** Reads the run with get_run waiting 30 s at a time until it finished. */
async function finished(client: Client, runId: string): Promise<RunBody> {
  for (let reads = 0; reads < 10; reads++) {
    const run = await tool<RunBody>(client, "get_run", { runId, waitSeconds: 30 });
    if (run.finished) return run;
  }
  throw new Error(`run ${runId} did not finish`);
}

/** A raw POST to /v1/mcp: what any HTTP client sends. */
function post(gatewayUrl: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(new URL("/v1/mcp", gatewayUrl), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
};

/** An answer of /v1/mcp the gateway gave itself: checked for the API's error shape, parsed. */
async function refusal(res: Response) {
  const text = await res.text();
  expectDocumented({ method: "POST", url: "/v1/mcp", status: res.status, headers: res.headers, text });
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as Record<string, unknown> };
}

describe("MCP: the Testrun tools over the gateway's /v1/mcp and over stdio", function () {
  this.timeout(90_000);
  let system: System;
  let pipeline: Pipeline;
  let client: Client;
  let held: HeldTarget;
  let heldCaseId: string;

  before(async () => {
    held = await HeldTarget.start();
    system = await sharedTestSystem();
    // The demo project `make run` seeds: its key is the one the banner prints.
    const demo = await seedDemo(system.env, system.demoTargetUrl);
    pipeline = new Pipeline(system.gatewayUrl, demo.secret);
    const ctx = createCliContext(system.env);
    await createEnvironment(ctx, { projectId: demo.projectId, name: "held", baseUrl: held.url });
    for (const name of ["Twin", "twin"])
      await createEnvironment(ctx, { projectId: demo.projectId, name, baseUrl: held.url });
    await addCases(system, demo.projectId, getCase("held page", "held", "/held"));
    const cases = await pipeline.call("GET", "/v1/test-cases?tag=held");
    heldCaseId = String((cases.body.testCases as { id: string }[])[0]?.id);
    client = await remote(system.gatewayUrl, bearer(demo.secret));
  });
  after(async () => {
    await client?.close();
    await held?.stop();
  });

  describe("over Streamable HTTP with the official SDK's client", () => {
    it("initializes as testrun and lists every tool with its input schema and annotations", async () => {
      expect(client.getServerVersion()).to.deep.include({ name: "testrun", version });
      expect(client.getInstructions()).to.contain("get_run with waitSeconds 30");
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).to.deep.equal(toolNames);
      const byName = Object.fromEntries(tools.map((t) => [t.name, t])) as Record<string, Tool>;
      for (const name of [
        "list_environments",
        "list_test_plans",
        "list_test_cases",
        "get_run",
        "get_test_case_history",
      ])
        expect(byName[name]?.annotations, name).to.deep.equal({ readOnlyHint: true, openWorldHint: false });
      const starting = {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      };
      expect(byName.start_run?.annotations).to.deep.equal(starting);
      expect(byName.rerun_run?.annotations).to.deep.equal(starting);
      expect(byName.cancel_run?.annotations).to.deep.include({ readOnlyHint: false, destructiveHint: true });
      expect(byName.start_run?.description).to.match(/one of the project's credits per test/);
      expect(byName.rerun_run?.description).to.match(/one credit per test/);

      const start = byName.start_run?.inputSchema as Record<string, unknown>;
      expect(start.type).to.equal("object");
      expect(start.additionalProperties).to.equal(false);
      expect(Object.keys(start.properties as object)).to.deep.equal([
        "testPlan",
        "tags",
        "testCaseIds",
        "environment",
        "name",
        "retries",
        "idempotencyKey",
      ]);
      expect(start.required ?? []).to.deep.equal([]);
      const getRun = byName.get_run?.inputSchema as {
        required: string[];
        properties: Record<string, object>;
      };
      expect(getRun.required).to.deep.equal(["runId"]);
      expect(getRun.properties.waitSeconds).to.deep.include({ type: "integer", minimum: 1, maximum: 30 });
      const cases = byName.list_test_cases?.inputSchema as { properties: Record<string, object> };
      expect(Object.keys(cases.properties)).to.deep.equal(["tags", "search"]);
    });

    it("lists the plans, starts Smoke and reads it PASSED, as an agent does with the demo key of make run", async () => {
      const { testPlans } = await tool<{ testPlans: { name: string }[] }>(client, "list_test_plans");
      expect(testPlans.map((p) => p.name)).to.deep.equal(["Smoke"]);
      const started = await tool<RunBody>(client, "start_run", { testPlan: "Smoke" });
      expect(started).to.deep.include({ name: "Smoke", status: "RUNNING", finished: false, totalTests: 2 });
      expect(started.url).to.match(/\/projects\/prj_\w+\/runs\/run_\w+$/);
      const run = await finished(client, started.id);
      expect(run).to.deep.include({ id: started.id, status: "PASSED", passedTests: 2, url: started.url });
      // The tool answers what REST answers.
      expect(await pipeline.getRun(run.id)).to.deep.equal(run);
    });

    it("lists environments and test cases (tag and search filters) as REST does", async () => {
      const environments = await tool(client, "list_environments");
      expect(environments).to.deep.equal((await pipeline.call("GET", "/v1/environments")).body);
      expect((environments.environments as { name: string }[]).map((e) => e.name)).to.deep.equal([
        "local",
        "unreachable",
        "held",
        "Twin",
        "twin",
      ]);
      for (const [args, query] of [
        [{}, ""],
        [{ tags: ["auth"] }, "?tag=auth"],
        [{ tags: ["SMOKE", "regression"], search: "LOG IN" }, "?tag=SMOKE&tag=regression&search=LOG%20IN"],
      ] as const) {
        const answer = await tool(client, "list_test_cases", args);
        expect(answer, query).to.deep.equal((await pipeline.call("GET", `/v1/test-cases${query}`)).body);
      }
      const { testCases } = await tool<{ testCases: { name: string }[] }>(client, "list_test_cases", {
        tags: ["auth"],
        search: "wrong",
      });
      expect(testCases.map((c) => c.name)).to.deep.equal(["a wrong password is forbidden"]);
    });

    it("cancels a run in progress; cancelling it again is a tool error, run_finished", async () => {
      const release = held.hold("/held");
      try {
        const arrived = held.arrived("/held");
        const started = await tool<RunBody>(client, "start_run", {
          testCaseIds: [heldCaseId],
          environment: "held",
          name: "to cancel",
        });
        await arrived;
        const cancelled = await tool<RunBody>(client, "cancel_run", { runId: started.id });
        expect(cancelled).to.deep.include({ status: "SKIPPED", skipReason: "cancelled", finished: true });
        expect(await call(client, "cancel_run", { runId: started.id })).to.deep.equal({
          isError: true,
          json: {
            status: 409,
            code: "run_finished",
            error: "the run already finished (SKIPPED); there is nothing to cancel",
          },
        });
      } finally {
        release();
      }
    });

    it("reruns a run: only its failed tests, or all of them; nothing failed is a tool error", async () => {
      const failing = await tool<RunBody>(client, "start_run", { tags: ["regression", "smoke"] });
      const failed = await finished(client, failing.id);
      expect(failed).to.deep.include({ status: "FAILED", totalTests: 4, failedTests: 1 });
      const onlyFailed = await tool<RunBody>(client, "rerun_run", { runId: failed.id, failedOnly: true });
      expect(onlyFailed).to.deep.include({ name: `${failed.name} (rerun of failed)`, totalTests: 1 });
      const all = await tool<RunBody>(client, "rerun_run", { runId: failed.id });
      expect(all).to.deep.include({ name: `${failed.name} (rerun)`, totalTests: 4 });
      expect(all.id).to.not.equal(onlyFailed.id);

      const passed = await finished(
        client,
        (await tool<RunBody>(client, "start_run", { testPlan: "Smoke" })).id,
      );
      const nothing = await call(client, "rerun_run", { runId: passed.id, failedOnly: true });
      expect(nothing.isError).to.equal(true);
      expect(nothing.json).to.include({ status: 400, code: "invalid_request" });
      await finished(client, onlyFailed.id);
      await finished(client, all.id);
    });

    it("gives the API's refusals as tool errors with its message: 402 with required and available, 409 with candidates, 400, 404", async () => {
      const poor = await newProject(system, "no credits", { credits: 0 });
      await addCases(system, poor.projectId, getCase("home page", "home", "/"));
      const poorClient = await remote(system.gatewayUrl, bearer(poor.pipeline.key));
      try {
        expect(await call(poorClient, "start_run", { tags: ["home"] })).to.deep.equal({
          isError: true,
          json: {
            status: 402,
            code: "insufficient_credits",
            error:
              "not enough test-run credits: 1 needed, 0 available; an operator of this Testrun installation grants credits (testrunctl credits grant): ask them for more",
            required: 1,
            available: 0,
          },
        });
      } finally {
        await poorClient.close();
      }

      const ambiguous = await call(client, "start_run", { testPlan: "Smoke", environment: "twin" });
      expect(ambiguous.isError).to.equal(true);
      expect(ambiguous.json).to.include({
        status: 409,
        code: "ambiguous_name",
        error: 'the environment name "twin" matches 2 items; pass one of their ids instead',
      });
      const environments = (await pipeline.call("GET", "/v1/environments")).body.environments as {
        id: string;
        name: string;
      }[];
      const twins = environments.filter((e) => e.name.toLowerCase() === "twin").map((e) => e.id);
      expect([...(ambiguous.json.candidates as string[])].sort()).to.deep.equal(twins.sort());

      const none = await call(client, "start_run", {});
      expect(none.isError).to.equal(true);
      expect(none.json).to.include({ status: 400, code: "invalid_request" });
      expect(none.json.error).to.match(/testPlan/);
      // A run holds at most 500 tests: the tool's input says so before the API is called.
      const testCaseIds = Array.from({ length: 501 }, (_, i) => `tc_${String(i).padStart(26, "0")}`);
      const tooMany = (await client.callTool({
        name: "start_run",
        arguments: { testCaseIds },
      })) as CallToolResult;
      expect(tooMany.isError).to.equal(true);
      expect(JSON.stringify(tooMany.content))
        .to.match(/testCaseIds/)
        .and.to.match(/500/);

      expect(await call(client, "get_run", { runId: "run_00000000000000000000000000" })).to.deep.include({
        isError: true,
      });
      const missing = await call(client, "get_run", { runId: "nothing" });
      expect(missing.json).to.include({ status: 404, code: "not_found" });

      // Arguments against the tool's own schema are refused before any request.
      const tooLong = (await client.callTool({
        name: "get_run",
        arguments: { runId: "run_x", waitSeconds: 31 },
      })) as CallToolResult;
      expect(tooLong.isError).to.equal(true);
      expect(JSON.stringify(tooLong.content)).to.contain("waitSeconds");
    });

    it("repeats a start with the same idempotencyKey as the first run, shared with REST's Idempotency-Key", async () => {
      const idempotencyKey = randomUUID();
      const first = await tool<RunBody>(client, "start_run", { testPlan: "Smoke", idempotencyKey });
      const again = await tool<RunBody & { replayed?: boolean }>(client, "start_run", {
        testPlan: "Smoke",
        idempotencyKey,
      });
      expect(again.id).to.equal(first.id);
      expect(again.replayed).to.equal(true);
      const rest = await pipeline.call(
        "POST",
        "/v1/runs",
        { testPlan: "Smoke" },
        { "Idempotency-Key": idempotencyKey },
      );
      expect(rest.status).to.equal(201);
      expect(rest.body.id).to.equal(first.id);
      expect(rest.headers.get("idempotency-replayed")).to.equal("true");
      const reused = await call(client, "start_run", { tags: ["smoke"], idempotencyKey });
      expect(reused.json).to.include({ status: 422, code: "idempotency_key_reused" });
      await finished(client, first.id);
    });
  });

  describe("authentication, as the REST API's", () => {
    it("refuses a request without a key, or with an unknown one, with 401 on the HTTP request", async () => {
      const missing = await refusal(await post(system.gatewayUrl, initialize));
      expect(missing.status).to.equal(401);
      expect(missing.body.code).to.equal("unauthorized");
      const unknownKey = `trk_${"a".repeat(46)}`;
      const unknown = await refusal(await post(system.gatewayUrl, initialize, bearer(unknownKey)));
      expect(unknown).to.deep.include({
        status: 401,
        body: { error: "invalid API key", code: "unauthorized" },
      });
      // The SDK's client sees the 401 as such.
      const refused = await remote(system.gatewayUrl, bearer(unknownKey)).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).to.be.instanceOf(StreamableHTTPError);
      expect((refused as StreamableHTTPError).code).to.equal(401);
    });

    it("takes the key in X-Api-Key too, and answers with the key's rate headers", async () => {
      const viaHeader = await remote(system.gatewayUrl, { "x-api-key": pipeline.key });
      try {
        expect((await viaHeader.listTools()).tools).to.have.length(toolNames.length);
      } finally {
        await viaHeader.close();
      }
      const res = await post(system.gatewayUrl, initialize, { "x-api-key": pipeline.key });
      expect(res.status).to.equal(200);
      expect(res.headers.get("content-type")).to.match(/^application\/json/);
      expect(res.headers.get("ratelimit-limit")).to.equal("100000");
      expect(res.headers.get("x-request-id")).to.be.a("string");
      expect(res.headers.get("mcp-session-id"), "stateless: no session").to.equal(null);
      const answer = (await res.json()) as { result: { serverInfo: { name: string } } };
      expect(answer.result.serverInfo.name).to.equal("testrun");
    });

    it("answers 403 once the key's creator lost their rights, as REST does", async () => {
      const ctx = createCliContext(system.env);
      const { organization } = await createOrganization(ctx, {
        name: "MCP rights",
        ownerEmail: "owner@mcp-rights.example",
        ownerName: "Owner",
      });
      const organizationId = organization?.id ?? "";
      const project = await createProject(ctx, { organizationId, name: "MCP rights" });
      const editor = await addMember(ctx, {
        organizationId,
        email: "editor@mcp-rights.example",
        displayName: "Editor",
        role: Role.EDITOR,
      });
      const { secret } = await createKey(ctx, {
        projectId: project.id,
        name: "agent",
        creatorMemberId: editor.id,
      });
      expect((await post(system.gatewayUrl, initialize, bearer(secret))).status).to.equal(200);
      await removeMember(ctx, { memberId: editor.id });
      const rest = await eventually(async () => {
        const answer = await new Pipeline(system.gatewayUrl, secret).call("GET", "/v1/environments");
        return answer.status === 403 ? answer : undefined;
      }, "the key to be refused");
      const mcp = await refusal(await post(system.gatewayUrl, initialize, bearer(secret)));
      expect(mcp).to.deep.include({ status: 403, body: rest.body });
    });

    it("serves no CORS, no GET stream, no sessions to end, and one JSON-RPC message per request", async () => {
      const preflight = await fetch(new URL("/v1/mcp", system.gatewayUrl), {
        method: "OPTIONS",
        headers: { origin: "https://example.com", "access-control-request-method": "POST" },
      });
      expect(preflight.status).to.equal(405);
      const withOrigin = await post(system.gatewayUrl, initialize, {
        ...bearer(pipeline.key),
        origin: "https://example.com",
      });
      expect(withOrigin.status).to.equal(200);
      for (const res of [preflight, withOrigin])
        expect([...res.headers.keys()].filter((name) => name.startsWith("access-control-"))).to.deep.equal(
          [],
        );

      for (const method of ["GET", "DELETE"]) {
        const res = await fetch(new URL("/v1/mcp", system.gatewayUrl), {
          method,
          headers: { ...bearer(pipeline.key), accept: "text/event-stream" },
        });
        const answer = await refusal(res);
        expect(answer.status, method).to.equal(405);
        expect(answer.headers.get("allow")).to.equal("POST");
      }

      const batch = await refusal(
        await post(system.gatewayUrl, [initialize, initialize], bearer(pipeline.key)),
      );
      expect(batch).to.deep.include({
        status: 400,
        body: { error: "the request body must be a JSON object", code: "invalid_request" },
      });
      const notJson = await refusal(
        await fetch(new URL("/v1/mcp", system.gatewayUrl), {
          method: "POST",
          headers: { ...bearer(pipeline.key), "content-type": "text/plain" },
          body: "hello",
        }),
      );
      expect(notJson.status).to.equal(400);
    });
  });

  describe("over stdio: testrun mcp", () => {
    it("serves the same tools with the official SDK's stdio client: starts Smoke and reads it PASSED", async () => {
      const transport = new StdioClientTransport({
        command: testrunBin,
        args: ["mcp"],
        env: cliEnv(system.gatewayUrl, pipeline.key),
        stderr: "pipe",
      });
      let stderr = "";
      transport.stderr?.on("data", (chunk) => (stderr += chunk));
      const local = new Client({ name: "testrun-e2e", version: "1.0.0" });
      await local.connect(transport);
      try {
        expect(local.getServerVersion()).to.deep.include({ name: "testrun", version });
        const remoteTools = (await client.listTools()).tools;
        expect((await local.listTools()).tools).to.deep.equal(remoteTools);
        const started = await tool<RunBody>(local, "start_run", { testPlan: "Smoke" });
        const run = await finished(local, started.id);
        expect(run).to.deep.include({ status: "PASSED", url: started.url });
        expect(await call(local, "get_run", { runId: "nothing" })).to.deep.include({
          isError: true,
          json: { status: 404, code: "not_found", error: "no such run in this project" },
        });
      } finally {
        await local.close();
      }
      expect(stderr).to.equal("");
    });

    it("gives a refused key as a tool error, ends when stdin closes, and needs TESTRUN_URL and TESTRUN_API_KEY", async () => {
      const transport = new StdioClientTransport({
        command: testrunBin,
        args: ["mcp"],
        env: cliEnv(system.gatewayUrl, `trk_${"b".repeat(46)}`),
      });
      const local = new Client({ name: "testrun-e2e", version: "1.0.0" });
      await local.connect(transport);
      try {
        expect(await call(local, "list_test_plans")).to.deep.equal({
          isError: true,
          json: { status: 401, code: "unauthorized", error: "invalid API key" },
        });
      } finally {
        await local.close();
      }
      // stdin is /dev/null: the client is gone at once.
      const ended = await runCli(["mcp"], cliEnv(system.gatewayUrl, pipeline.key));
      expect(ended).to.deep.equal({ code: 0, stdout: "", stderr: "" });
      const { TESTRUN_API_KEY: _, ...withoutKey } = cliEnv(system.gatewayUrl, pipeline.key);
      const usage = await runCli(["mcp"], withoutKey);
      expect(usage.code).to.equal(5);
      expect(usage.stdout).to.equal("");
      expect(usage.stderr).to.contain("set TESTRUN_API_KEY");
    });
  });

  describe("an outside client: the Python mcp package from PyPI", () => {
    it("lists the tools, starts Smoke and reads it PASSED over /v1/mcp and over stdio", async function () {
      // Installs the Python tools first unless make test-only did.
      this.timeout(240_000);
      const python = (await exec(`${repoRoot}scripts/python-tools.sh`)).stdout.trim();
      const script = `${repoRoot}test/mcp_client.py`;
      const env = { PATH: String(process.env.PATH), TESTRUN_API_KEY: pipeline.key };
      const remoteRun = await exec(python, [script, "remote", `${system.gatewayUrl}/v1/mcp`, "Smoke"], {
        env,
      });
      // Over stdio as docs/agents.md configures it: node and the one-file CLI, action/testrun.mjs.
      const bundle = `${repoRoot}action/testrun.mjs`;
      const stdioRun = await exec(python, [script, "stdio", "Smoke", process.execPath, bundle, "mcp"], {
        env: { ...env, TESTRUN_URL: system.gatewayUrl },
      });
      for (const { stdout } of [remoteRun, stdioRun]) {
        const seen = JSON.parse(stdout);
        expect(seen.tools).to.deep.equal(toolNames);
        expect(seen.readOnly).to.deep.equal([
          "compare_runs",
          "explain_failure",
          "get_run",
          "get_test_case_history",
          "list_environments",
          "list_test_cases",
          "list_test_plans",
        ]);
        expect(seen.plans).to.deep.equal(["Smoke"]);
        expect(seen.started.status).to.equal("RUNNING");
        expect(seen.finished).to.deep.include({ id: seen.started.id, status: "PASSED", passedTests: 2 });
        expect(seen.finished.url).to.equal(seen.started.url);
        expect(seen.missing).to.deep.include({ isError: true, status: 404, code: "not_found" });
        expect((await pipeline.getRun(seen.started.id)).status).to.equal("PASSED");
      }
    });
  });
});

describe("MCP under a small rate limit: tool calls and REST requests share the key's", function () {
  this.timeout(60_000);
  const limit = 8;
  let gateway: GatewayProcess;
  let pipeline: Pipeline;

  before(async () => {
    const shared = await gatewayOnSharedSystem({ RATE_LIMIT_PER_MINUTE: String(limit) });
    gateway = shared.gateway;
    const demo = await seedDemo(shared.system.env, shared.system.demoTargetUrl);
    pipeline = new Pipeline(gateway.http, demo.secret);
  });
  after(async () => {
    await gateway?.stop();
  });

  it("counts every POST to /v1/mcp as one request: initialize, the initialized notification, tools/list, each tool call", async () => {
    const remaining = async () => {
      const answer = await pipeline.call("GET", "/v1/environments");
      return answer.status === 429 ? "429" : Number(answer.headers.get("ratelimit-remaining"));
    };
    // initialize and notifications/initialized (its GET for a stream is 405, before any key check).
    const client = await remote(gateway.http, bearer(pipeline.key));
    try {
      expect(await remaining()).to.equal(limit - 3);
      await tool(client, "list_test_plans");
      expect(await remaining()).to.equal(limit - 5);
      await client.listTools();
      expect(await remaining()).to.equal(limit - 7);
      await tool(client, "list_environments");
      const refused = await client.callTool({ name: "list_test_plans", arguments: {} }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).to.be.instanceOf(StreamableHTTPError);
      expect((refused as StreamableHTTPError).code).to.equal(429);
      expect(String(refused)).to.contain("rate_limited");
      expect(await remaining()).to.equal("429");
    } finally {
      await client.close();
    }
  });
});
