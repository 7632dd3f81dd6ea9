// compare_runs and explain_failure (issue 41), the MCP tools that say why a run broke, over the
// gateway's /v1/mcp and over stdio (`testrun mcp`), against the whole system executing for real:
// twelve test cases fail on one missing page, then one more breaks.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createCliContext, importContent, readCaseFile } from "@testrun/cli";
import { expect } from "chai";
import type { System } from "../scripts/system.js";
import { addCases, newProject, type Pipeline, type RunBody, sharedTestSystem } from "./pipeline.js";
import { cliEnv, testrunBin } from "./testrun-cli.js";

const caseYaml = (name: string, path: string, status: number) =>
  `- name: ${name}\n  tags: [explained]\n  steps:\n    - name: open it\n      http: { method: GET, path: "${path}" }\n      expect: { status: ${status} }\n`;

/** A tool's one text content, parsed; its length too (the answers are bounded). */
async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const [content] = result.content;
  if (content?.type !== "text") throw new Error(`not text: ${JSON.stringify(result)}`);
  return {
    isError: result.isError === true,
    chars: content.text.length,
    // biome-ignore lint/suspicious/noExplicitAny: the tools' answers are read field by field
    json: JSON.parse(content.text) as any,
  };
}

describe("MCP: compare_runs and explain_failure", function () {
  this.timeout(60_000);
  let system: System;
  let pipeline: Pipeline;
  let client: Client;
  let first: RunBody;
  let second: RunBody;

  const test = (run: RunBody, name: string) => {
    const found = run.tests.find((t) => t.name === name);
    if (!found) throw new Error(`no test ${name}`);
    return found;
  };

  before(async () => {
    system = await sharedTestSystem();
    const project = await newProject(system, "explained", { credits: 100 });
    pipeline = project.pipeline;
    const names = Array.from({ length: 12 }, (_, i) => `missing page ${i + 1}`);
    const created = await addCases(
      system,
      project.projectId,
      names.map((name) => caseYaml(name, "/no-such-page", 200)).join("") + caseYaml("health", "/health", 200),
    );
    const ids = created.map((c) => c.id);
    const run = async () =>
      pipeline.finished((await pipeline.start({ testCaseIds: ids, name: "explained" })).id);
    first = await run();
    await importContent(createCliContext(system.env), {
      projectId: project.projectId,
      document: readCaseFile(caseYaml("health", "/health", 201), "cases.yaml"),
    });
    second = await run();
    client = new Client({ name: "testrun-e2e", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/v1/mcp", system.gatewayUrl), {
        requestInit: { headers: { authorization: `Bearer ${pipeline.key}` } },
      }),
    );
  });
  after(() => client?.close());

  it("compare_runs: exactly one newly failing test, first, with its changed step and an explanation", async () => {
    const { isError, json, chars } = await call(client, "compare_runs", { runId: second.id });
    expect(isError, JSON.stringify(json)).to.equal(false);
    expect(json.base.id).to.equal(first.id);
    expect(json.counts).to.include({ newlyFailing: 1, stillFailing: 12 });
    expect(json.explanation).to.contain(`Against run ${first.id}`);
    expect(json.explanation).to.contain("1 newly failing test, 12 still failing");
    expect(json.explanation).to.contain("look at them first");
    const [newly] = json.tests;
    expect([newly.name, newly.change, newly.status, newly.baseStatus]).to.deep.equal([
      "health",
      "newly_failing",
      "FAILED",
      "PASSED",
    ]);
    expect(newly.stepChanges[0].before.http.expect.status).to.deep.equal([200]);
    expect(newly.stepChanges[0].after.http.expect.status).to.deep.equal([201]);
    // Only the tests that changed: still failing ones, not the unchanged.
    expect(json.tests).to.have.length(13);
    expect(chars).to.be.below(40_000);
  });

  it("explain_failure: a new failure, its evidence, its own group and the run it first failed in", async () => {
    const health = test(second, "health");
    const { isError, json } = await call(client, "explain_failure", {
      runId: second.id,
      testResultId: health.id,
    });
    expect(isError, JSON.stringify(json)).to.equal(false);
    expect(json.verdict).to.contain(`It is a new failure: it PASSED in the base run ${first.id}`);
    expect(json.verdict).to.contain("1 step of it changed since");
    expect(json.test).to.include({ status: "FAILED", cause: "assertion" });
    expect(json.attempts).to.have.length(1);
    // The response the failed step got: the page answers 200 where 201 was expected.
    expect(json.evidence.httpResponse.status).to.equal(200);
    expect(json.failureGroup).to.include({ occurrences: 1, casesAffected: 1 });
    expect(json.firstFailedRunId).to.equal(second.id);
    expect(json.comparison.change).to.equal("newly_failing");
  });

  it("explain_failure: a known failure shared by twelve cases, failing since the first run", async () => {
    const missing = test(second, "missing page 3");
    const { json } = await call(client, "explain_failure", { runId: second.id, testResultId: missing.id });
    expect(json.verdict).to.contain(`already failing in the base run, since run ${first.id}`);
    expect(json.verdict).to.contain("24 occurrences in 12 test cases");
    expect(json.failureGroup.firstSeen.runId).to.equal(first.id);
    expect(json.failureGroup.recentOccurrences).to.have.length(5);
    expect(json.failureGroup.cases).to.have.length(10);
    expect(json.failureGroup.moreCases).to.equal(2);
    expect(json.firstFailedRunId).to.equal(first.id);
    expect(json.evidence.httpResponse.status).to.equal(404);
  });

  it("answers a tool error for a test or run that is not the key's", async () => {
    const unknownTest = await call(client, "explain_failure", {
      runId: second.id,
      testResultId: "tr_01m80000000000000000000000",
    });
    expect([unknownTest.isError, unknownTest.json.status, unknownTest.json.code]).to.deep.equal([
      true,
      404,
      "not_found",
    ]);
    const other = await newProject(system, "explained other", { credits: 1 });
    const outsider = new Client({ name: "testrun-e2e", version: "1.0.0" });
    await outsider.connect(
      new StreamableHTTPClientTransport(new URL("/v1/mcp", system.gatewayUrl), {
        requestInit: { headers: { authorization: `Bearer ${other.pipeline.key}` } },
      }),
    );
    try {
      const foreign = await call(outsider, "compare_runs", { runId: second.id });
      expect([foreign.isError, foreign.json.status]).to.deep.equal([true, 404]);
    } finally {
      await outsider.close();
    }
  });

  it("serves both over stdio (testrun mcp) with the same answers", async () => {
    const local = new Client({ name: "testrun-e2e", version: "1.0.0" });
    await local.connect(
      new StdioClientTransport({
        command: testrunBin,
        args: ["mcp"],
        env: cliEnv(system.gatewayUrl, pipeline.key),
      }),
    );
    try {
      const compared = await call(local, "compare_runs", { runId: second.id, base: first.id });
      expect([compared.json.baseRule, compared.json.counts.newlyFailing]).to.deep.equal(["named", 1]);
      const explained = await call(local, "explain_failure", {
        runId: second.id,
        testResultId: test(second, "health").id,
      });
      expect(explained.json.firstFailedRunId).to.equal(second.id);
    } finally {
      await local.close();
    }
  });
});
