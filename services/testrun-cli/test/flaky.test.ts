// Retried tests as `testrun` reports them (docs/pipelines.md, "Retries and flaky tests"), against a
// scripted gateway answering a finished run: "PASSED on retry (flaky)" lines with the failed
// attempts' causes, exit 0 with a warning (1 with --fail-on-flaky), the step summary, and the JUnit
// report in Surefire's rerun format as an outside reader (Python's junitparser) parses it.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Run, TestAttempt } from "@testrun/api-client";
import { expect } from "chai";
import { main } from "../src/cli.js";
import { FakeGateway, fakeRun } from "./fake-gateway.js";

const exec = promisify(execFile);
const repoRoot = new URL("../../../", import.meta.url).pathname;

const attempt = (number: number, fields: Partial<TestAttempt>): TestAttempt => ({
  number,
  status: "FAILED",
  startedAt: "2026-11-22T10:15:30.123Z",
  finishedAt: "2026-11-22T10:15:30.923Z",
  durationMs: 800,
  summary: "",
  failedStep: null,
  stepResults: [],
  cause: null,
  executor: `executor-${number}`,
  artifacts: [],
  ...fields,
});

const got500 = 'step 1 "open": expected status 200, got 500';
const screenshot = (id: string, test: string) => ({
  id,
  kind: "screenshot" as const,
  name: "failure",
  contentType: "image/png",
  size: 2048,
  step: 1,
  url: `http://api.example/v1/runs/run_1/tests/${test}/artifacts/${id}`,
});

/** "health answers" passed at once; "log in" failed (assertion, then a lost executor) and passed. */
function flakyRun(): Run {
  const run = fakeRun("PASSED");
  const [health, login] = run.tests;
  if (!health || !login) throw new Error("two tests");
  Object.assign(health, {
    flaky: false,
    attempts: [attempt(1, { status: "PASSED", summary: "1 step passed" })],
  });
  Object.assign(login, {
    flaky: true,
    retries: 2,
    attempts: [
      attempt(1, {
        summary: got500,
        failedStep: 1,
        cause: "assertion",
        artifacts: [screenshot("art_1", "tr_1")],
      }),
      attempt(2, { summary: "the executor stopped responding", cause: "executor_lost" }),
      attempt(3, { status: "PASSED", summary: "1 step passed" }),
    ],
  });
  return { ...run, flakyTests: 1 };
}

/** "log in" failed three times: a timeout, then twice a 500 (its summary is the last attempt's). */
function failedAfterRetries(): Run {
  const run = fakeRun("FAILED");
  const login = run.tests[1];
  if (!login) throw new Error("two tests");
  Object.assign(login, {
    summary: got500,
    cause: "assertion",
    flaky: false,
    retries: 2,
    attempts: [
      attempt(1, { summary: "step 1 timed out after 10s", cause: "timeout", failedStep: 1 }),
      attempt(2, { summary: got500, cause: "assertion", failedStep: 1 }),
      attempt(3, { summary: got500, cause: "assertion", failedStep: 1 }),
    ],
  });
  return { ...run, flakyTests: 0 };
}

/** The report as junitparser's xunit2 reader (Surefire's rerun elements) sees it. */
async function parseJunit(file: string) {
  const python = (await exec(`${repoRoot}scripts/python-tools.sh`)).stdout.trim();
  const script = `import json, sys
from junitparser.xunit2 import JUnitXml
xml = JUnitXml.fromfile(sys.argv[1])
cases = []
for suite in xml:
    for case in suite:
        reruns = [{"kind": type(r).__name__, "message": r.message, "type": r.type,
                   "stackTrace": r.stack_trace, "systemOut": r.system_out}
                  for r in case.flaky_failures() + case.rerun_failures()]
        results = [{"kind": type(r).__name__, "message": r.message, "type": r.type} for r in case.result]
        cases.append({"name": case.name, "passed": case.is_passed, "results": results, "reruns": reruns})
print(json.dumps({"tests": xml.tests, "failures": xml.failures, "errors": xml.errors, "cases": cases}))`;
  return JSON.parse((await exec(python, ["-c", script, file])).stdout);
}

describe("testrun and retried tests", function () {
  // The first use of the Python tools may make their environment.
  this.timeout(120_000);
  let gateway: FakeGateway;
  let dir: string;
  beforeEach(async () => {
    gateway = await FakeGateway.start();
    dir = await mkdtemp(join(tmpdir(), "testrun-flaky-"));
  });
  afterEach(async () => {
    await gateway.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const wait = async (run: Run, ...flags: string[]) => {
    gateway.answer = () => ({ status: 200, body: run });
    let stdout = "";
    let stderr = "";
    const summary = join(dir, "summary.md");
    await writeFile(summary, "");
    const result = await main(["wait", "run_1", ...flags], {
      env: {
        TESTRUN_URL: gateway.url,
        TESTRUN_API_KEY: `trk_${"a".repeat(46)}`,
        GITHUB_STEP_SUMMARY: summary,
      },
      stdout: {
        write: (text) => {
          stdout += text;
        },
      },
      stderr: {
        write: (text) => {
          stderr += text;
        },
      },
    });
    return { code: result.code, stdout, stderr, summary: await readFile(summary, "utf8") };
  };

  it("prints a pass on retry as PASSED on retry (flaky) with each failed attempt's cause, exits 0 and warns", async () => {
    const { code, stdout } = await wait(flakyRun());
    expect(code).to.equal(0);
    expect(stdout).to.contain(
      [
        "  PASSED  health answers (600ms)",
        "  PASSED on retry (flaky) log in (600ms)",
        `    attempt 1 FAILED, assertion: ${got500}`,
        "    attempt 2 FAILED, executor_lost (the system's fault): the executor stopped responding",
        "",
      ].join("\n"),
    );
    expect(stdout).to.contain("PASSED: 2 passed (1 flaky), 0 failed of 2 in 1.2s\n");
    expect(stdout).to.contain(
      'Warning: 1 test passed only on retry (flaky): "log in"; the run still counts as passed (--fail-on-flaky fails it)\n',
    );
  });

  it("exits 1 for the same run with --fail-on-flaky, and 0 with it for a run without flaky tests", async () => {
    const flaky = await wait(flakyRun(), "--fail-on-flaky");
    expect(flaky.code).to.equal(1);
    expect(flaky.stdout).to.contain("--fail-on-flaky makes that a failure (exit 1)");
    const steady = await wait(fakeRun("PASSED"), "--fail-on-flaky");
    expect(steady.code).to.equal(0);
    expect(steady.stdout).to.not.contain("Warning");
  });

  it("counts flaky tests in the job summary and marks the test with why its attempts failed", async () => {
    const { summary } = await wait(flakyRun());
    expect(summary).to.contain("PASSED: 2 passed (1 flaky), 0 failed of 2");
    const row = summary.split("\n").find((line) => line.includes("[log in]"));
    expect(row).to.match(/^\| ⚠️ PASSED on retry \(flaky\) \| \[log in\]/);
    expect(row).to.contain("attempt 1 FAILED, assertion:");
    expect(row).to.contain("attempt 2 FAILED, executor\\_lost (the system's fault)");
  });

  it("names the cause of a failure after retries, with its earlier attempts", async () => {
    const { code, stdout } = await wait(failedAfterRetries());
    expect(code).to.equal(1);
    expect(stdout).to.contain(
      [
        `  FAILED  log in (600ms): ${got500} [assertion]`,
        "    attempt 1 FAILED, timeout: step 1 timed out after 10s",
        `    attempt 2 FAILED, assertion: ${got500}`,
      ].join("\n"),
    );
  });

  it("writes a flaky pass as a passing testcase with a flakyFailure for each failed attempt of its own cause", async () => {
    const junit = join(dir, "flaky.xml");
    expect((await wait(flakyRun(), "--junit", junit)).code).to.equal(0);
    const report = await parseJunit(junit);
    expect(report).to.include({ tests: 2, failures: 0, errors: 0 });
    const login = report.cases.find((c: { name: string }) => c.name === "log in");
    expect(login).to.include({ passed: true });
    expect(login.results).to.deep.equal([]);
    // The lost executor was the system's: not a flaky failure of the test.
    expect(login.reruns).to.deep.equal([
      {
        kind: "FlakyFailure",
        message: got500,
        type: "assertion",
        stackTrace: `attempt 1 FAILED (assertion), at step 1 on executor executor-1: ${got500}`,
        systemOut: `${flakyRun().tests[1]?.url}\nscreenshot failure: http://api.example/v1/runs/run_1/tests/tr_1/artifacts/art_1`,
      },
    ]);
    const health = report.cases.find((c: { name: string }) => c.name === "health answers");
    expect(health).to.deep.include({ passed: true, reruns: [] });
  });

  it("downloads an earlier attempt's artifacts with --artifacts and attaches them to its flakyFailure", async () => {
    const run = flakyRun();
    const kept = { status: 500, body: { text: "the cart service blipped" } };
    const size = Buffer.byteLength(JSON.stringify(kept));
    const response = {
      id: "art_2",
      kind: "http_response" as const,
      name: "http-response",
      contentType: "application/json",
      size,
      step: 1,
      url: "http://api.example/v1/runs/run_1/tests/tr_1/artifacts/art_2",
    };
    const first = run.tests[1]?.attempts?.[0];
    if (!first) throw new Error("an attempt");
    first.artifacts = [response];
    const out = join(dir, "out");
    const junit = join(dir, "attached.xml");
    let stdout = "";
    gateway.answer = (request) =>
      request.url.includes("/artifacts/") ? { status: 200, body: kept } : { status: 200, body: run };
    const result = await main(["wait", "run_1", "--artifacts", out, "--junit", junit], {
      env: { TESTRUN_URL: gateway.url, TESTRUN_API_KEY: `trk_${"a".repeat(46)}` },
      stdout: {
        write: (text) => {
          stdout += text;
        },
      },
      stderr: { write: () => undefined },
    });
    expect(result.code).to.equal(0);
    expect(stdout).to.contain(`Artifacts: 1 of 1 files (${size} B)`);
    const file = join(out, "log-in-tr_1", "1-http-response-art_2.json");
    expect(JSON.parse(await readFile(file, "utf8"))).to.deep.equal(kept);
    const report = await parseJunit(junit);
    const login = report.cases.find((c: { name: string }) => c.name === "log in");
    expect(login.reruns[0].systemOut).to.equal(`${run.tests[1]?.url}\n[[ATTACHMENT|${file}]]`);
  });

  it("writes a failure after retries as a failure (the last attempt) with a rerunFailure for each earlier one", async () => {
    const junit = join(dir, "failed.xml");
    expect((await wait(failedAfterRetries(), "--junit", junit)).code).to.equal(1);
    const report = await parseJunit(junit);
    expect(report).to.include({ tests: 2, failures: 1, errors: 0 });
    const login = report.cases.find((c: { name: string }) => c.name === "log in");
    expect(login.passed).to.equal(false);
    expect(login.results).to.deep.equal([{ kind: "Failure", message: got500, type: "FAILED" }]);
    expect(
      login.reruns.map((r: { kind: string; type: string; message: string }) => [r.kind, r.type, r.message]),
    ).to.deep.equal([
      ["RerunFailure", "timeout", "step 1 timed out after 10s"],
      ["RerunFailure", "assertion", got500],
    ]);
  });
});
