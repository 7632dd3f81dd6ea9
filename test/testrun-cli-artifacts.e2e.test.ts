// What `testrun` and the MCP tools do with a failed browser test's artifacts (docs/pipelines.md,
// "Artifacts"; docs/agents.md, "Screenshots"): the screenshot's url on the failure's lines,
// `--artifacts DIR` writing every file as stored, the JUnit report attaching them, and get_run
// answering the screenshot as image content. Every service is a real process and every request
// goes through the real gateway; the test takes the executor's part itself (claim, PutArtifact,
// CompleteTest over the runs service's gRPC API, as test/artifacts-api.e2e.test.ts does), so it
// knows exactly which bytes were stored.
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve, sep } from "node:path";
import { crc32, deflateSync } from "node:zlib";
import type { Client as RpcClient } from "@connectrpc/connect";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type Run, TestrunClient } from "@testrun/api-client";
import { ArtifactKind, RunsService, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { serviceClient } from "@testrun/kit";
import { repoRoot } from "@testrun/testing";
import { downloadArtifacts } from "@testrun/testrun-cli";
import { expect } from "chai";
import pg from "pg";
import type { System } from "../scripts/system.js";
import {
  type ArtifactBody,
  addCases,
  getCase,
  newProject,
  type Pipeline,
  type RunBody,
  startTestSystem,
} from "./pipeline.js";
import { cliEnv, GatewayProxy, runCli, startCli, testrunBin } from "./testrun-cli.js";

/** A real PNG of `width` x 1 pixels of one colour (a screenshot as far as any reader can tell). */
function png(width: number, rgb: [number, number, number]): Uint8Array {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(1, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits per channel, RGB
  const row = Buffer.concat([Buffer.from([0]), ...Array.from({ length: width }, () => Buffer.from(rgb))]);
  return new Uint8Array(
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk("IHDR", header),
      chunk("IDAT", deflateSync(row)),
      chunk("IEND", Buffer.alloc(0)),
    ]),
  );
}

/** Every file under `dir`, as paths relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

interface Stored {
  kind: ArtifactKind;
  name: string;
  contentType: string;
  content: Uint8Array;
  step?: number;
}

const homeShot = png(40, [10, 120, 200]);
const failureShot = png(64, [200, 30, 30]);
const trace = new Uint8Array(randomBytes(5000));
const browserLog = new TextEncoder().encode(JSON.stringify([{ type: "console", text: "boom" }]));

/** What an executor stores for a failed browser test: a screenshot step's, the failure's, a trace, a log. */
const browserFailure: Stored[] = [
  { kind: ArtifactKind.SCREENSHOT, name: "home", contentType: "image/png", content: homeShot, step: 1 },
  { kind: ArtifactKind.SCREENSHOT, name: "failure", contentType: "image/png", content: failureShot, step: 1 },
  { kind: ArtifactKind.TRACE, name: "trace", contentType: "application/zip", content: trace },
  {
    kind: ArtifactKind.BROWSER_LOG,
    name: "browser-log",
    contentType: "application/json",
    content: browserLog,
  },
];

describe("testrun and the MCP tools with a failed browser test's artifacts", function () {
  this.timeout(120_000);
  let system: System;
  let executor: RpcClient<typeof RunsService>;
  let db: pg.Client;
  let pipeline: Pipeline;
  let env: Record<string, string>;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "testrun-artifacts-"));
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
    const project = await newProject(system, "cli artifacts", { credits: 1000 });
    pipeline = project.pipeline;
    await addCases(
      system,
      project.projectId,
      getCase("sign in shows the greeting", "shot", "/") +
        getCase("../../../../escape/..\\\\x", "hostile", "/") +
        ["one", "two", "three", "four", "five"].map((n) => getCase(`page ${n}`, "many", "/")).join(""),
    );
    env = cliEnv(system.gatewayUrl, pipeline.key);
  });
  after(async () => {
    await db?.end();
    await system?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** Claims each test of the run, stores `artifacts(index)` for it and fails it at step 1. */
  async function failTests(runId: string, artifacts: (index: number) => Stored[]): Promise<RunBody> {
    const run = await pipeline.getRun(runId);
    for (const [index, test] of run.tests.entries()) {
      const { assignment } = await executor.claimTest({ testResultId: test.id, executorId: "cli-e2e/0" });
      const lease = { testResultId: test.id, leaseToken: assignment?.leaseToken ?? "" };
      for (const artifact of artifacts(index)) await executor.putArtifact({ ...lease, ...artifact });
      await executor.completeTest({
        ...lease,
        status: TestStatus.FAILED,
        summary: 'step 1 "get it": expected text "Hello" in the greeting, found "Sign in"',
        durationMs: 900n,
        failedStep: 1,
        stepResults: [{ number: 1, status: TestStatus.FAILED, durationMs: 800n }],
      });
    }
    return pipeline.finished(runId);
  }

  /** A run of the tagged tests, failed with `artifacts` each, as the API then lists it. */
  async function failedRun(tag: string, artifacts: (index: number) => Stored[] = () => browserFailure) {
    const started = await pipeline.start({ tags: [tag] });
    return failTests(started.id, artifacts);
  }

  const byName = (run: RunBody, name: string, test = 0): ArtifactBody => {
    const found = run.tests[test]?.artifacts.find((a) => a.name === name);
    if (!found) throw new Error(`no artifact ${name} in ${JSON.stringify(run.tests[test])}`);
    return found;
  };

  /** Where --artifacts DIR puts an artifact (docs/pipelines.md, "Artifacts"). */
  const expectedPath = (
    root: string,
    test: RunBody["tests"][number],
    artifact: ArtifactBody,
    file: string,
  ) => {
    const [base, extension] = file.split(".");
    return join(
      root,
      `${test.name.replace(/[^A-Za-z0-9._-]+/g, "-")}-${test.id}`,
      `${artifact.step}-${base}-${artifact.id}.${extension}`,
    );
  };

  describe("testrun", () => {
    it("run prints a failed test's screenshot url; --artifacts writes every file as stored; the JUnit report attaches them", async () => {
      const out = join(dir, "run", "artifacts");
      const junit = join(dir, "run", "junit.xml");
      const cli = startCli(["run", "--tags", "shot", "--artifacts", out, "--junit", junit], env);
      await cli.printed(/Run run_\w+/);
      const runId = String(/Run (run_\w+)/.exec(cli.output().stdout)?.[1]);
      await failTests(runId, () => browserFailure);
      const { code, stdout, stderr } = await cli.done;
      expect(code, stdout + stderr).to.equal(1);
      expect(stderr).to.equal("");
      const run = await pipeline.getRun(runId);
      const [test] = run.tests;
      if (!test) throw new Error("no test");
      const failure = byName(run, "failure");
      // The failure's screenshot, not the first one stored (the screenshot step's); the case's
      // health beside its line.
      expect(stdout).to.contain(
        `  FAILED  sign in shows the greeting (900ms): step 1 "get it": expected text "Hello" in the greeting, found "Sign in" (new failure)\n    ${test.url}\n    screenshot: ${failure.url}\n`,
      );
      expect(stdout).to.contain(`Artifacts: 4 of 4 files (`);
      expect(stdout).to.contain(`) in ${resolve(out)}\n`);

      const files = {
        home: expectedPath(out, test, byName(run, "home"), "home.png"),
        failure: expectedPath(out, test, failure, "failure.png"),
        trace: expectedPath(out, test, byName(run, "trace"), "trace.zip"),
        log: expectedPath(out, test, byName(run, "browser-log"), "browser-log.json"),
      };
      const expected = { home: homeShot, failure: failureShot, trace, log: browserLog };
      for (const [what, file] of Object.entries(files)) {
        const bytes = await readFile(file);
        expect(bytes.equals(Buffer.from(expected[what as keyof typeof expected])), what).to.equal(true);
      }
      // Those four and nothing else: no temporary file left behind.
      expect(await filesUnder(out)).to.deep.equal(
        Object.values(files)
          .map((f) => relative(out, f))
          .sort(),
      );

      const xml = await readFile(junit, "utf8");
      // One line each, the failure screenshot first (GitLab shows a test case's first attachment).
      expect(xml).to.contain(
        `<system-out>${test.url}\n[[ATTACHMENT|${files.failure}]]\n[[ATTACHMENT|${files.home}]]\n[[ATTACHMENT|${files.trace}]]\n[[ATTACHMENT|${files.log}]]</system-out>`,
      );

      // status prints the same screenshot line.
      const status = await runCli(["status", runId], env);
      // Its case's first result, a failure: a new failure (docs/pipelines.md, "Test health and quarantine").
      expect(status.stdout).to.contain(`found "Sign in" (new failure)\n    screenshot: ${failure.url}\n`);
    });

    it("wait --artifacts under GitLab names attachments relative to CI_PROJECT_DIR; without --artifacts the report lists the urls", async () => {
      const run = await failedRun("shot");
      const [test] = run.tests;
      if (!test) throw new Error("no test");
      const project = join(dir, "gitlab");
      const junit = join(project, "junit.xml");
      const waited = await runCli(["wait", run.id, "--artifacts", join(project, "out"), "--junit", junit], {
        ...env,
        CI_PROJECT_DIR: project,
      });
      expect(waited.code, waited.stdout + waited.stderr).to.equal(1);
      const failure = expectedPath("out", test, byName(run, "failure"), "failure.png");
      expect(await readFile(join(project, failure))).to.deep.equal(Buffer.from(failureShot));
      expect(await readFile(junit, "utf8")).to.contain(
        `<system-out>${test.url}\n[[ATTACHMENT|${failure}]]\n`,
      );

      const plain = join(dir, "plain.xml");
      const urls = await runCli(["wait", run.id, "--junit", plain], env);
      expect(urls.code).to.equal(1);
      const xml = await readFile(plain, "utf8");
      expect(xml).to.not.contain("[[ATTACHMENT");
      expect(xml).to.contain(
        `<system-out>${test.url}\nscreenshot failure: ${byName(run, "failure").url}\nscreenshot home: ${byName(run, "home").url}\ntrace trace: ${byName(run, "trace").url}\nbrowser_log browser-log: ${byName(run, "browser-log").url}</system-out>`,
      );
    });

    it("keeps files of a hostile test name and artifact name inside DIR", async () => {
      const root = join(dir, "hostile");
      const out = join(root, "a", "b", "out");
      const run = await failedRun("hostile", () => [
        { ...browserFailure[1], name: "../../../../escape/page" } as Stored,
        { ...browserFailure[0], name: "..\\..\\..\\x" } as Stored,
      ]);
      expect(run.tests[0]?.name).to.equal("../../../../escape/..\\\\x");
      const { code, stderr } = await runCli(["wait", run.id, "--artifacts", out], env);
      expect(code, stderr).to.equal(1);
      expect(stderr).to.equal("");
      const files = await filesUnder(root);
      expect(files).to.have.length(2);
      for (const file of files) {
        expect(file.startsWith(`a${sep}b${sep}out${sep}`), file).to.equal(true);
        // DIR, one folder for the test, the file: nothing deeper, nothing higher.
        expect(file.split(sep), file).to.have.length(5);
      }
      const testId = run.tests[0]?.id;
      expect(files).to.include(
        join(
          "a",
          "b",
          "out",
          `escape-..-x-${testId}`,
          `1-escape-page-${byName(run, "../../../../escape/page").id}.png`,
        ),
      );
    });

    it("says which artifacts could not be downloaded (404, more bytes than listed, over a file's bound) and keeps the run's exit code", async () => {
      const run = await failedRun("shot");
      const [expired, longer, huge, fine] = ["home", "failure", "trace", "browser-log"].map((name) =>
        byName(run, name),
      );
      const proxy = await GatewayProxy.start(system.gatewayUrl);
      const artifactsAt = `/v1/runs/${run.id}/tests/${run.tests[0]?.id}/artifacts/`;
      proxy.intercept = async (request, forward) => {
        if (request.path.startsWith(`/v1/runs/${run.id}`) && !request.path.startsWith(artifactsAt)) {
          const answer = await forward();
          const body = JSON.parse(answer.body) as RunBody;
          // Listed with the test and with the attempt that made it: the lie is told in both.
          const test = body.tests[0];
          for (const artifact of [
            ...(test?.artifacts ?? []),
            ...(test?.attempts ?? []).flatMap((a) => a.artifacts),
          ])
            if (artifact.id === huge?.id) artifact.size = 300 * 1024 * 1024;
          // Past its retention period from now on: the gateway's own 404.
          await db.query("update runs.artifacts set expires_at = now() - interval '1 second' where id = $1", [
            expired?.id,
          ]);
          return { status: 200, body: JSON.stringify(body) };
        }
        if (request.path === `${artifactsAt}${longer?.id}`)
          return { status: 200, body: "x".repeat((longer?.size ?? 0) + 64 * 1024) };
        return undefined;
      };
      try {
        const out = join(dir, "failures");
        const junit = join(dir, "failures.xml");
        const { code, stdout, stderr } = await runCli(
          ["wait", run.id, "--artifacts", out, "--junit", junit],
          {
            ...env,
            TESTRUN_URL: proxy.url,
          },
        );
        expect(code, stdout + stderr).to.equal(1);
        const test = `of test "sign in shows the greeting"`;
        expect(stderr.trim().split("\n")).to.deep.equal([
          `testrun: could not download artifact ${expired?.id} (screenshot "home" ${test}): no such artifact (HTTP 404 not_found)`,
          `testrun: could not download artifact ${longer?.id} (screenshot "failure" ${test}): the API sent more than the ${longer?.size} bytes it is listed with`,
          `testrun: could not download artifact ${huge?.id} (trace "trace" ${test}): 300.0 MiB is over the 256.0 MiB a file may have`,
        ]);
        expect(stdout).to.match(/Artifacts: 1 of 4 files \(\d+ B\) in .*; 3 could not be downloaded\n/);
        // The one refused for its size was never asked for.
        expect(proxy.count("GET", `${artifactsAt}${huge?.id}`)).to.equal(0);
        const [testResult] = run.tests;
        if (!testResult || !fine) throw new Error("no test");
        const written = expectedPath(out, testResult, fine, "browser-log.json");
        expect(await filesUnder(out)).to.deep.equal([relative(out, written)]);
        expect(await readFile(written)).to.deep.equal(Buffer.from(browserLog));
        const xml = await readFile(junit, "utf8");
        expect(xml).to.contain(`[[ATTACHMENT|${written}]]`);
        expect(xml).to.contain(`screenshot failure: ${longer?.url}`);
      } finally {
        await proxy.stop();
      }
    });

    it("stops at the bound of all downloads together, saying so for each artifact past it", async () => {
      const run = (await failedRun("shot")) as unknown as Run;
      const reasons: string[] = [];
      const client = new TestrunClient({ baseUrl: system.gatewayUrl, apiKey: pipeline.key });
      // Room for the two screenshots and the log, not for the 5000-byte trace.
      const downloads = await downloadArtifacts(client, run, join(dir, "total"), {
        maxTotalBytes: 4096,
        onFailure: (artifact, _test, reason) => reasons.push(`${artifact.name}: ${reason}`),
      });
      expect([...downloads.files.keys()]).to.deep.equal(
        (run.tests[0]?.artifacts ?? []).filter((a) => a.name !== "trace").map((a) => a.id),
      );
      const before = homeShot.byteLength + failureShot.byteLength;
      expect(reasons).to.deep.equal([
        `trace: 4.9 KiB more would pass the 4.0 KiB one command downloads (${before} B so far)`,
      ]);
    });

    it("the GitHub Action passes its artifacts input through: the files, and the JUnit report attaching them", async () => {
      const out = join(dir, "action", "artifacts");
      const junit = join(dir, "action", "junit.xml");
      const inputs = {
        tags: "shot",
        artifacts: out,
        junit,
        "api-url": system.gatewayUrl,
        "api-key": pipeline.key,
      };
      const action = startCli(
        [],
        {
          PATH: String(process.env.PATH),
          GITHUB_ACTIONS: "true",
          ...Object.fromEntries(
            Object.entries(inputs).map(([name, value]) => [`INPUT_${name.toUpperCase()}`, value]),
          ),
        },
        `${repoRoot}action/index.mjs`,
      );
      await action.printed(/Run run_\w+/);
      const runId = String(/Run (run_\w+)/.exec(action.output().stdout)?.[1]);
      const run = await failTests(runId, () => browserFailure);
      const { code, stdout } = await action.done;
      expect(code, stdout).to.equal(1);
      const [test] = run.tests;
      if (!test) throw new Error("no test");
      const failure = expectedPath(out, test, byName(run, "failure"), "failure.png");
      expect(await readFile(failure)).to.deep.equal(Buffer.from(failureShot));
      expect(await readFile(junit, "utf8")).to.contain(`[[ATTACHMENT|${failure}]]`);
    });

    it("refuses --artifacts with --no-wait", async () => {
      const { code, stderr } = await runCli(["run", "--tags", "shot", "--no-wait", "--artifacts", dir], env);
      expect(code).to.equal(5);
      expect(stderr).to.contain("--artifacts has no use with --no-wait");
    });
  });

  describe("MCP: get_run", () => {
    /** The SDK's client over the gateway's /v1/mcp. */
    const remote = async () => {
      const client = new Client({ name: "artifacts-e2e", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL("/v1/mcp", system.gatewayUrl), {
          requestInit: { headers: { authorization: `Bearer ${pipeline.key}` } },
        }),
      );
      return client;
    };
    /** The SDK's client over stdio, `testrun mcp`. */
    const local = async () => {
      const client = new Client({ name: "artifacts-e2e", version: "1.0.0" });
      await client.connect(new StdioClientTransport({ command: testrunBin, args: ["mcp"], env }));
      return client;
    };
    const getRun = async (client: Client, runId: string) =>
      (await client.callTool({ name: "get_run", arguments: { runId } })) as CallToolResult;

    it("answers a failed test's screenshot as image content whose bytes are the PNG, over /v1/mcp and over stdio", async () => {
      const run = await failedRun("shot");
      const [test] = run.tests;
      const failure = byName(run, "failure");
      for (const connect of [remote, local]) {
        const client = await connect();
        try {
          const result = await getRun(client, run.id);
          expect(result.isError ?? false).to.equal(false);
          expect(result.content.map((c) => c.type)).to.deep.equal(["text", "image"]);
          const [json, image] = result.content;
          if (json?.type !== "text" || image?.type !== "image") throw new Error("wrong content");
          expect(image.mimeType).to.equal("image/png");
          expect(Buffer.from(image.data, "base64").equals(Buffer.from(failureShot))).to.equal(true);
          // The REST answer, and which test the image is of.
          const { screenshots, ...rest } = JSON.parse(json.text);
          expect(rest).to.deep.equal(await pipeline.getRun(run.id));
          expect(screenshots).to.deep.equal([
            {
              testResultId: test?.id,
              test: "sign in shows the greeting",
              artifactId: failure.id,
              name: "failure",
              step: 1,
              attached: true,
            },
          ]);
        } finally {
          await client.close();
        }
      }
    });

    it("attaches at most 3 images and 3 MiB, saying why the others were left out", async () => {
      const big = new Uint8Array(randomBytes(3 * 1024 * 1024 + 1));
      big.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      const shots = [png(10, [1, 2, 3]), png(20, [4, 5, 6]), big, png(30, [7, 8, 9]), png(40, [9, 9, 9])];
      const run = await failedRun("many", (index) => [
        {
          kind: ArtifactKind.SCREENSHOT,
          name: "failure",
          contentType: "image/png",
          content: shots[index] ?? new Uint8Array(),
          step: 1,
        },
      ]);
      const client = await remote();
      try {
        const result = await getRun(client, run.id);
        const [json, ...images] = result.content;
        if (json?.type !== "text") throw new Error("no text");
        const sent = images.map((image) =>
          image.type === "image" ? Buffer.from(image.data, "base64") : null,
        );
        const expectedImages = [shots[0], shots[1], shots[3]].map((s) => Buffer.from(s ?? new Uint8Array()));
        expect(sent).to.deep.equal(expectedImages);
        const { screenshots } = JSON.parse(json.text) as {
          screenshots: { test: string; attached: boolean; reason?: string }[];
        };
        expect(screenshots.map(({ test, attached, reason }) => ({ test, attached, reason }))).to.deep.equal([
          { test: "page one", attached: true, reason: undefined },
          { test: "page two", attached: true, reason: undefined },
          {
            test: "page three",
            attached: false,
            reason: "its 3.0 MiB would pass the 3.0 MiB of images one result carries",
          },
          { test: "page four", attached: true, reason: undefined },
          { test: "page five", attached: false, reason: "only 3 screenshots come back with one result" },
        ]);
      } finally {
        await client.close();
      }
    });
  });
});
