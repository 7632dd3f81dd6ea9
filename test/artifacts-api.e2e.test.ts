// Artifacts through the REST API (docs/rest-api.md, "Artifacts"): listed with each test result of
// GET /v1/runs/:id, their bytes served at their url to a key of the run's project only, with
// headers that keep a stored file from ever running in the API's origin. Every service is a real
// process; the test takes the executor's part itself (claim, PutArtifact, CompleteTest over the
// runs service's gRPC API, as an executor does), so it knows exactly which bytes were stored.
import { randomBytes } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import { ArtifactKind, RunsService, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { serviceClient } from "@testrun/kit";
import { componentRedisUrl, type ServiceProcess, startServiceProcess } from "@testrun/testing";
import { expect } from "chai";
import pg from "pg";
import type { System } from "../scripts/system.js";
import { expectDocumented } from "./openapi-check.js";
import { addCases, getCase, newProject, type Pipeline, type RunBody, startTestSystem } from "./pipeline.js";

describe("artifacts over REST: listed with test results, bytes to the project's keys only", function () {
  this.timeout(120_000);
  let system: System;
  let executor: Client<typeof RunsService>;
  let db: pg.Client;
  let pipeline: Pipeline;
  let otherPipeline: Pipeline;
  let projectId: string;

  before(async () => {
    system = await startTestSystem();
    // The test is the executor: the system's own would take the tests first.
    await system.processes.get("executor")?.stop("SIGTERM");
    system.processes.delete("executor");
    executor = serviceClient(RunsService, String(system.env.RUNS_URL), {
      token: String(system.env.EXECUTOR_TOKEN),
      timeoutMs: 30_000,
    });
    db = new pg.Client({ connectionString: system.env.DATABASE_URL });
    await db.connect();
    const project = await newProject(system, "artifacts api", { credits: 100 });
    ({ pipeline, projectId } = project);
    otherPipeline = (await newProject(system, "artifacts other", { credits: 0 })).pipeline;
    await addCases(system, projectId, getCase("home page", "home", "/"));
  });
  after(async () => {
    await db?.end();
    await system?.stop();
  });

  /** What an executor stores for a failed browser test: a screenshot, a trace and the browser's log. */
  const screenshot = new Uint8Array(randomBytes(3000));
  screenshot.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const trace = new Uint8Array(randomBytes(5000));
  /** A log holding markup, as a page's console may: served, it must never run. */
  const browserLog = new TextEncoder().encode(
    JSON.stringify([{ type: "console", text: "<script>alert(document.cookie)</script>" }]),
  );

  /** Starts a run, claims its test, stores the three artifacts and fails the test at step 1. */
  async function failedRunWithArtifacts(): Promise<{ run: RunBody; ids: string[] }> {
    const started = await pipeline.start({ tags: ["home"], recordTraces: true });
    expect(started.tests[0]?.artifacts, "no artifacts before the test is final").to.deep.equal([]);
    const testResultId = started.tests[0]?.id ?? "";
    const { assignment } = await executor.claimTest({ testResultId, executorId: "artifacts-e2e/0" });
    expect(assignment?.recordTrace, "recordTraces reaches the executor").to.equal(true);
    const lease = { testResultId, leaseToken: assignment?.leaseToken ?? "" };
    const stored = [
      await executor.putArtifact({
        ...lease,
        kind: ArtifactKind.SCREENSHOT,
        name: "failure: Sign in/../page",
        contentType: "image/png",
        content: screenshot,
        step: 1,
      }),
      await executor.putArtifact({
        ...lease,
        kind: ArtifactKind.TRACE,
        name: "trace",
        contentType: "application/zip",
        content: trace,
      }),
      await executor.putArtifact({
        ...lease,
        kind: ArtifactKind.BROWSER_LOG,
        name: "browser-log",
        contentType: "application/json",
        content: browserLog,
      }),
    ];
    await executor.completeTest({
      ...lease,
      status: TestStatus.FAILED,
      summary: 'step 1 "get it": expected status 200, got 500',
      durationMs: 1200n,
      failedStep: 1,
      stepResults: [{ number: 1, status: TestStatus.FAILED, durationMs: 1100n }],
    });
    return { run: await pipeline.getRun(started.id), ids: stored.map((s) => s.artifact?.id ?? "") };
  }

  /** GET of an artifact's url as a pipeline would, checked against the OpenAPI document. */
  async function download(url: string, key: string | undefined, headers: Record<string, string> = {}) {
    const response = await fetch(url, {
      headers: { ...(key && { authorization: `Bearer ${key}` }), ...headers },
    });
    const bytes = new Uint8Array(await response.arrayBuffer());
    const text = new TextDecoder().decode(bytes);
    expectDocumented({
      method: "GET",
      url: new URL(url).pathname,
      status: response.status,
      headers: response.headers,
      text,
    });
    return { status: response.status, headers: response.headers, bytes, text };
  }

  it("lists each test result's artifacts on GET /v1/runs/:id with absolute urls under API_URL", async () => {
    const { run, ids } = await failedRunWithArtifacts();
    const origin = String(system.env.API_URL);
    expect(run.tests[0]?.artifacts).to.deep.equal([
      {
        id: ids[0],
        kind: "screenshot",
        name: "failure: Sign in/../page",
        contentType: "image/png",
        size: 3000,
        step: 1,
        url: `${origin}/v1/runs/${run.id}/tests/${run.tests[0]?.id}/artifacts/${ids[0]}`,
      },
      {
        id: ids[1],
        kind: "trace",
        name: "trace",
        contentType: "application/zip",
        size: 5000,
        step: 0,
        url: `${origin}/v1/runs/${run.id}/tests/${run.tests[0]?.id}/artifacts/${ids[1]}`,
      },
      {
        id: ids[2],
        kind: "browser_log",
        name: "browser-log",
        contentType: "application/json",
        size: browserLog.byteLength,
        step: 0,
        url: `${origin}/v1/runs/${run.id}/tests/${run.tests[0]?.id}/artifacts/${ids[2]}`,
      },
    ]);
    // Every field of the contract is as before (later issues only add fields beside them).
    expect(Object.keys(run.tests[0] ?? {})).to.include.members([
      "artifacts",
      "durationMs",
      "id",
      "name",
      "status",
      "summary",
      "testCaseId",
      "url",
    ]);
    expect(run.tests[0]?.status).to.equal("FAILED");
  });

  it("serves the bytes to a key of the project with their type, a safe file name, nosniff, a CSP and private caching", async () => {
    const { run } = await failedRunWithArtifacts();
    const [shot, zip, log] = run.tests[0]?.artifacts ?? [];
    const expected = [
      { artifact: shot, bytes: screenshot, type: "image/png", file: "failure-Sign-in-..-page.png" },
      { artifact: zip, bytes: trace, type: "application/zip", file: "trace.zip" },
      { artifact: log, bytes: browserLog, type: "application/json", file: "browser-log.json" },
    ];
    for (const { artifact, bytes, type, file } of expected) {
      const answer = await download(artifact?.url ?? "", pipeline.key);
      expect(answer.status).to.equal(200);
      expect(Buffer.from(answer.bytes).equals(Buffer.from(bytes)), `${type} bytes`).to.equal(true);
      expect(answer.headers.get("content-type")).to.equal(type);
      expect(answer.headers.get("content-length")).to.equal(String(bytes.byteLength));
      expect(answer.headers.get("content-disposition")).to.equal(`attachment; filename="${file}"`);
      expect(answer.headers.get("x-content-type-options")).to.equal("nosniff");
      expect(answer.headers.get("content-security-policy")).to.equal(
        "default-src 'none'; frame-ancestors 'none'; sandbox",
      );
      expect(answer.headers.get("cache-control")).to.equal("private, max-age=3600, immutable");
      expect(answer.headers.get("ratelimit-remaining"), "counted like any request").to.match(/^\d+$/);
    }
  });

  it("answers 404 not_found to another project's key, an unknown or malformed id, and an expired artifact; 401 without a key", async () => {
    const { run } = await failedRunWithArtifacts();
    const [shot] = run.tests[0]?.artifacts ?? [];
    const url = shot?.url ?? "";
    const notFound = async (answer: { status: number; text: string }) => {
      expect(answer.status, answer.text).to.equal(404);
      const body = JSON.parse(answer.text) as { code: string; error: string };
      expect(body.code).to.equal("not_found");
      return body.error;
    };
    const otherKey = await notFound(await download(url, otherPipeline.key));
    const testPath = `${system.gatewayUrl}/v1/runs/${run.id}/tests/${run.tests[0]?.id}`;
    const unknown = await notFound(
      await download(`${testPath}/artifacts/art_01jd3k6q2r3s4t5v6w7x8y9z0a`, pipeline.key),
    );
    expect(otherKey, "another project's artifact reads as an unknown one").to.equal(unknown);
    await notFound(await download(`${testPath}/artifacts/not-an-artifact`, pipeline.key));
    // The artifact exists, but not under another run or test: its url names where it belongs.
    const { run: another } = await failedRunWithArtifacts();
    const elsewhere = url
      .replace(run.id, another.id)
      .replace(String(run.tests[0]?.id), String(another.tests[0]?.id));
    expect(await notFound(await download(elsewhere, pipeline.key))).to.equal(unknown);
    expect((await download(url, undefined)).status).to.equal(401);

    // Past the retention period (30 days after it was stored).
    await db.query("update runs.artifacts set expires_at = now() - interval '1 second' where id = $1", [
      shot?.id,
    ]);
    expect(await notFound(await download(url, pipeline.key))).to.equal(unknown);
    const reread = await pipeline.getRun(run.id);
    expect(reread.tests[0]?.artifacts.map((a) => a.id)).to.not.include(shot?.id);
  });

  describe("a gateway without API_URL", () => {
    let gateway: ServiceProcess;
    let http: string;

    before(async () => {
      const { API_URL: _unset, ...env } = system.env;
      gateway = await startServiceProcess("gateway", {
        ...env,
        HTTP_PORT: "0",
        REDIS_URL: componentRedisUrl(String(process.env.REDIS_URL), "gateway"),
        KEY_CACHE_SECRET: randomBytes(32).toString("base64url"),
        TRUST_PROXY_HOPS: "1",
      });
      const line = gateway.output().find((l) => l.includes('"msg":"http listening"'));
      http = `http://127.0.0.1:${(JSON.parse(line ?? "{}") as { httpPort?: number }).httpPort}`;
    });
    after(async () => {
      await gateway?.stop("SIGTERM");
    });

    it("makes artifact urls from the origin each request came to, through trusted proxies too", async () => {
      const { run } = await failedRunWithArtifacts();
      const path = `/v1/runs/${run.id}/tests/${run.tests[0]?.id}/artifacts/${run.tests[0]?.artifacts[0]?.id}`;
      const get = async (headers: Record<string, string>) => {
        const response = await fetch(`${http}/v1/runs/${run.id}`, {
          headers: { authorization: `Bearer ${pipeline.key}`, ...headers },
        });
        return ((await response.json()) as RunBody).tests[0]?.artifacts[0]?.url;
      };
      expect(await get({})).to.equal(`${http}${path}`);
      expect(
        await get({
          "X-Forwarded-For": "10.1.2.3",
          "X-Forwarded-Proto": "https",
          "X-Forwarded-Host": "api.example.test",
        }),
      ).to.equal(`https://api.example.test${path}`);
    });
  });
});
