// Test health and quarantine through the REST API, the whole system executing for real (issue
// 40): a case broken by its version is a new failure, then failing since its first failed run; a
// member quarantines it and the next run PASSED with the failure counted in failedTests and
// quarantinedFailures; GET /v1/test-cases/{id}/history pages its results with its health, for the
// project's keys only, and refuses what is past its bounds with a 400; the MCP tools read the same,
// and `testrun` exits 0 for such a run, naming the failure, with it skipped in its JUnit report.

import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { serviceClient } from "@testrun/kit";
import { expect } from "chai";
import type { System } from "../scripts/system.js";
import { addCases, newProject, type Pipeline, type RunBody, sharedTestSystem } from "./pipeline.js";
import { cliEnv, runCli } from "./testrun-cli.js";

interface Ref {
  runId: string;
  testResultId: string;
  caseVersion: number;
  at: string;
}

interface Health {
  testCaseId: string;
  environmentId: string;
  state: string;
  judged: string;
  sampleSize: number;
  enoughResults: boolean;
  failureRate: { count: number; sample: number; rate: number; low: number; high: number };
  flipRate: { count: number; sample: number };
  failingSince: Ref | null;
  lastFailure: Ref | null;
  lastResult: Ref | null;
  outcomes: string;
  quarantine: { reason: string; active: boolean; startedByMemberId: string | null } | null;
}

interface Test {
  id: string;
  testCaseId: string;
  status: string;
  health: Health | null;
  quarantined: boolean;
}

interface Run extends Omit<RunBody, "tests"> {
  quarantinedFailures: number;
  tests: Test[];
}

interface History {
  entries: {
    testResultId: string;
    runId: string;
    runName: string;
    environmentId: string;
    status: string;
    cause: string | null;
    caseVersion: number;
    startedBy: { kind: string; id: string | null };
    quarantined: boolean;
    attempts: number;
    url: string;
  }[];
  nextCursor: string | null;
  health: Health[];
}

/** A case of one GET step of the demo target expecting `status`. */
const caseYaml = (name: string, status: number) =>
  `- name: ${name}\n  tags: [health]\n  steps:\n    - name: open it\n      http: { method: GET, path: "/health" }\n      expect: { status: ${status} }\n`;

const reason = "broken by the login change, TICKET-40";

describe("test health and quarantine through the REST API", () => {
  let system: System;
  let pipeline: Pipeline;
  let other: Pipeline;
  let steadyId: string;
  let brokenId: string;
  let idleId: string;
  let first: Run;
  let second: Run;

  const run = async (ids: string[], name: string) => {
    const started = await pipeline.start({ testCaseIds: ids, name });
    return (await pipeline.finished(started.id)) as unknown as Run;
  };
  const test = (run: Run, testCaseId: string) => {
    const found = run.tests.find((t) => t.testCaseId === testCaseId);
    if (!found) throw new Error(`no test of ${testCaseId} in run ${run.id}`);
    return found;
  };
  const history = async (query: string, as = pipeline) => {
    const answer = await as.call("GET", `/v1/test-cases/${brokenId}/history${query}`);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    return answer.body as unknown as History;
  };

  before(async () => {
    system = await sharedTestSystem();
    const project = await newProject(system, "test health", { credits: 100 });
    pipeline = project.pipeline;
    other = (await newProject(system, "test health other", { credits: 0 })).pipeline;
    const created = await addCases(
      system,
      project.projectId,
      caseYaml("steady", 200) + caseYaml("broken", 201) + caseYaml("never run", 200),
    );
    [steadyId, brokenId, idleId] = created.map((c) => c.id) as [string, string, string];
    first = await run([steadyId, brokenId], "health one");
    // A member (the project's owner) quarantines the broken case: keys cannot.
    const runs = serviceClient(RunsService, system.env.RUNS_URL ?? "", {
      token: system.env.SERVICE_TOKEN ?? "",
    });
    await runs.quarantineTestCase({
      actor: { kind: { case: "memberId", value: project.ownerId } },
      projectId: project.projectId,
      testCaseId: brokenId,
      reason,
      days: 7,
    });
    second = await run([steadyId, brokenId], "health two");
  });

  it("shows a case broken by its version as a new failure beside its result, and a new case as unknown", () => {
    expect([first.status, first.failedTests, first.quarantinedFailures]).to.deep.equal(["FAILED", 1, 0]);
    const broken = test(first, brokenId);
    expect([broken.status, broken.quarantined]).to.deep.equal(["FAILED", false]);
    expect(broken.health).to.include({ state: "new_failure", judged: "new_failure", sampleSize: 1 });
    expect(broken.health?.enoughResults).to.equal(false);
    expect(broken.health?.failureRate).to.include({ count: 1, sample: 1, rate: 1 });
    // One failure of one: the Wilson interval says how little that proves.
    expect(broken.health?.failureRate.low).to.be.within(0.2, 0.21);
    expect(broken.health?.failingSince?.runId).to.equal(first.id);
    const steady = test(first, steadyId);
    expect(steady.health).to.include({ state: "unknown", outcomes: "p" });
    expect(steady.health?.failingSince).to.equal(null);
  });

  it("leaves a run PASSED when only a quarantined case failed, counting it in quarantinedFailures", () => {
    expect([second.status, second.failedTests, second.passedTests, second.quarantinedFailures]).to.deep.equal(
      ["PASSED", 1, 1, 1],
    );
    const broken = test(second, brokenId);
    expect([broken.status, broken.quarantined]).to.deep.equal(["FAILED", true]);
    // Quarantined, and beneath it failing since the first run: every result of its version failed.
    expect(broken.health).to.include({ state: "quarantined", judged: "failing", outcomes: "ff" });
    expect(broken.health?.failingSince?.runId).to.equal(first.id);
    expect(broken.health?.quarantine).to.include({ reason, active: true });
    expect(broken.health?.quarantine?.startedByMemberId).to.match(/^mem_/);
    expect(test(second, steadyId).quarantined).to.equal(false);
  });

  it("lists the project's lasting quarantines to its keys, and none of them to another project's", async () => {
    const answer = await pipeline.call("GET", "/v1/quarantines");
    expect(answer.status).to.equal(200);
    const { quarantines } = answer.body as {
      quarantines: { testCaseId: string; reason: string; active: boolean; expiresAt: string }[];
    };
    expect(quarantines.map((q) => [q.testCaseId, q.reason, q.active])).to.deep.equal([
      [brokenId, reason, true],
    ]);
    // Quarantined for 7 days.
    const days = (Date.parse(quarantines[0]?.expiresAt ?? "") - Date.now()) / 86_400_000;
    expect(days).to.be.within(6.9, 7);
    const elsewhere = await other.call("GET", "/v1/quarantines");
    expect([elsewhere.status, elsewhere.body]).to.deep.equal([200, { quarantines: [] }]);
    const unknown = await pipeline.call("GET", "/v1/quarantines?all=true");
    expect([unknown.status, unknown.body.code]).to.deep.equal([400, "invalid_request"]);
  });

  it("carries quarantinedFailures in the run list too", async () => {
    const answer = await pipeline.call("GET", "/v1/runs?limit=2");
    const runs = (answer.body as { runs: { id: string; quarantinedFailures: number }[] }).runs;
    expect(runs.map((r) => [r.id, r.quarantinedFailures])).to.deep.equal([
      [second.id, 1],
      [first.id, 0],
    ]);
  });

  it("pages a case's history newest first, with who started each run and its health", async () => {
    const page = await history("?limit=1");
    expect(page.entries.map((e) => e.runId)).to.deep.equal([second.id]);
    const [entry] = page.entries;
    expect(entry).to.include({
      runName: "health two",
      status: "FAILED",
      cause: "assertion",
      quarantined: true,
      attempts: 1,
      testResultId: test(second, brokenId).id,
    });
    expect(entry?.caseVersion).to.be.at.least(1);
    expect(entry?.startedBy.kind).to.equal("key");
    expect(entry?.startedBy.id).to.match(/^key_/);
    expect(entry?.url).to.contain(`/runs/${second.id}/tests/`);
    expect(page.nextCursor).to.be.a("string");
    expect(page.health).to.have.length(1);
    expect(page.health[0]).to.include({ state: "quarantined", judged: "failing", testCaseId: brokenId });

    const rest = await history(`?limit=1&cursor=${encodeURIComponent(page.nextCursor ?? "")}`);
    expect(rest.entries.map((e) => [e.runId, e.quarantined])).to.deep.equal([[first.id, false]]);
    expect(rest.nextCursor).to.equal(null);
    // Without a limit, 50: both at once.
    expect((await history("")).entries).to.have.length(2);
  });

  it("keeps one environment named by its name (ignoring case) or id", async () => {
    const environmentId = test(second, brokenId).health?.environmentId ?? "";
    for (const environment of ["demo", "DEMO", environmentId]) {
      const page = await history(`?environment=${environment}`);
      expect(page.entries.map((e) => e.environmentId)).to.deep.equal([environmentId, environmentId]);
      expect(page.health.map((h) => h.environmentId)).to.deep.equal([environmentId]);
    }
    const unknown = await pipeline.call("GET", `/v1/test-cases/${brokenId}/history?environment=production`);
    expect([unknown.status, unknown.body.code]).to.deep.equal([404, "not_found"]);
    expect(unknown.body.error).to.equal('no environment with the id or name "production" in this project');
  });

  it("answers a case of the project without results with an empty history", async () => {
    const answer = await pipeline.call("GET", `/v1/test-cases/${idleId}/history`);
    expect([answer.status, answer.body]).to.deep.equal([200, { entries: [], nextCursor: null, health: [] }]);
  });

  it("refuses limits past 1 to 100, a cursor it did not give, and unknown parameters with a 400", async () => {
    const refusals: [string, string][] = [
      ["?limit=0", "limit must be a whole number from 1 to 100"],
      ["?limit=101", "limit must be a whole number from 1 to 100"],
      ["?limit=ten", "limit must be a whole number from 1 to 100"],
      ["?limit=5&limit=6", "limit must be a whole number from 1 to 100"],
      ["?cursor=not-a-cursor", "cursor is not valid"],
      ["?environment=de%00mo", "text in the request must not contain NUL characters"],
      ["?env=demo", 'unknown query parameter "env"; accepted: environment, limit, cursor'],
    ];
    for (const [query, message] of refusals) {
      const answer = await pipeline.call("GET", `/v1/test-cases/${brokenId}/history${query}`);
      expect([answer.status, answer.body.code, answer.body.error], query).to.deep.equal([
        400,
        "invalid_request",
        message,
      ]);
    }
  });

  it("is not found for another project's key, or for what is not a test case id", async () => {
    for (const [as, id] of [
      [other, brokenId],
      [pipeline, "tc_nope"],
    ] as const) {
      const answer = await as.call("GET", `/v1/test-cases/${id}/history`);
      expect([answer.status, answer.body]).to.deep.equal([
        404,
        { error: "no such test case in this project", code: "not_found" },
      ]);
    }
  });

  it("gives an agent the history and a run's health through the MCP tools of /v1/mcp", async () => {
    const client = new Client({ name: "health-e2e", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/v1/mcp", system.gatewayUrl), {
        requestInit: { headers: { authorization: `Bearer ${pipeline.key}` } },
      }),
    );
    try {
      const tool = async (name: string, args: Record<string, unknown>) => {
        const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
        const [content] = result.content;
        expect(result.isError ?? false, JSON.stringify(result)).to.equal(false);
        return JSON.parse(content?.type === "text" ? content.text : "{}") as Record<string, unknown>;
      };
      const read = (await tool("get_test_case_history", {
        testCaseId: brokenId,
        environment: "demo",
        limit: 1,
      })) as unknown as History;
      expect(read.entries.map((e) => e.runId)).to.deep.equal([second.id]);
      expect(read.health[0]?.quarantine?.reason).to.equal(reason);
      const run = (await tool("get_run", { runId: second.id })) as unknown as Run;
      expect([run.status, run.quarantinedFailures]).to.deep.equal(["PASSED", 1]);
      expect(test(run, brokenId).health?.state).to.equal("quarantined");
      const missing = (await client.callTool({
        name: "get_test_case_history",
        arguments: { testCaseId: "tc_nope" },
      })) as CallToolResult;
      const [content] = missing.content;
      expect([missing.isError, content?.type === "text" && JSON.parse(content.text)]).to.deep.equal([
        true,
        { status: 404, error: "no such test case in this project", code: "not_found" },
      ]);
    } finally {
      await client.close();
    }
  });

  it("lets testrun exit 0 for a run PASSED with a quarantined failure, naming it, and report it skipped in JUnit", async () => {
    const dir = await mkdtemp(join(tmpdir(), "health-e2e-"));
    try {
      const junit = join(dir, "junit.xml");
      const { code, stdout, stderr } = await runCli(
        ["run", "--cases", `${steadyId},${brokenId}`, "--name", "health three", "--junit", junit],
        cliEnv(system.gatewayUrl, pipeline.key),
      );
      expect(code, stdout + stderr).to.equal(0);
      expect(stdout).to.match(/PASSED: 1 passed, 1 failed \(1 quarantined\) of 2 in /);
      expect(stdout).to.match(
        new RegExp(
          `FAILED \\(quarantined\\) broken \\([^)]+\\): .*\\(failing since run ${first.id} \\(case version \\d+\\)\\)\n`,
        ),
      );
      expect(stdout).to.contain(`1 quarantined failure (not failing the run):\n  broken — ${reason}\n`);
      const xml = await readFile(junit, "utf8");
      expect(xml).to.contain(`<skipped message="quarantined: ${reason}"/>`);
      expect(xml).to.match(/<testsuite [^>]*failures="0" errors="0" skipped="1"/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
