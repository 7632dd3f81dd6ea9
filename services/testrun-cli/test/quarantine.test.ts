// Test health and quarantine as `testrun` reports them (docs/pipelines.md, "Test health and
// quarantine"), against a scripted gateway answering a finished run: a run PASSED with a
// quarantined failure exits 0 and names it with its reason; each test line carries its case's
// health; the job summary counts it; the JUnit report has it skipped with the reason, its failure
// text kept in system-out, as an outside reader (Python's junitparser) parses it.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { CaseHealth, Run } from "@testrun/api-client";
import { expect } from "chai";
import { main } from "../src/cli.js";
import { FakeGateway, fakeRun } from "./fake-gateway.js";

const exec = promisify(execFile);
const repoRoot = new URL("../../../", import.meta.url).pathname;

const got401 = 'step 1 "log in": expected status 200, got 401';
const reason = "login is broken upstream, TICKET-40";

const rate = (count: number, sample: number) => ({ count, sample, rate: count / sample, low: 0, high: 1 });
const ref = (runId: string, caseVersion: number) => ({
  runId,
  testResultId: "tr_9",
  caseVersion,
  at: "2026-11-20T10:00:00.000Z",
});

function health(testCaseId: string, fields: Partial<CaseHealth>): CaseHealth {
  return {
    testCaseId,
    environmentId: "env_1",
    name: "",
    state: "stable",
    judged: "stable",
    caseVersion: 3,
    sampleSize: 30,
    enoughResults: true,
    failureRate: rate(0, 30),
    flipRate: rate(0, 29),
    failingSince: null,
    lastFailure: null,
    lastResult: null,
    medianDurationMs: 600,
    p90DurationMs: 700,
    previousMedianDurationMs: 590,
    resultsTotal: 30,
    failuresTotal: 0,
    outcomes: "p".repeat(30),
    quarantine: null,
    ...fields,
  };
}

/** "health answers" passed (known flaky); "log in" failed, quarantined: the run PASSED. */
function quarantinedRun(quarantine: CaseHealth["quarantine"] = quarantineOf()): Run {
  const run = fakeRun("FAILED");
  const [answers, login] = run.tests;
  if (!answers || !login) throw new Error("two tests");
  Object.assign(answers, {
    quarantined: false,
    health: health("tc_0", { state: "flaky", judged: "flaky", failureRate: rate(4, 30) }),
  });
  Object.assign(login, {
    cause: "assertion",
    quarantined: true,
    health: health("tc_1", {
      state: quarantine ? "quarantined" : "failing",
      judged: "failing",
      failingSince: ref("run_0", 3),
      quarantine,
    }),
  });
  return { ...run, status: "PASSED", passedTests: 1, failedTests: 1, quarantinedFailures: 1 };
}

function quarantineOf(): NonNullable<CaseHealth["quarantine"]> {
  return {
    testCaseId: "tc_1",
    reason,
    startedAt: "2026-11-21T10:00:00.000Z",
    expiresAt: "2026-12-05T10:00:00.000Z",
    startedByMemberId: "mem_1",
    endedAt: null,
    liftedByMemberId: null,
    active: true,
  };
}

/** The report as junitparser sees it: each case's results (skipped, failure) and its system-out. */
async function parseJunit(file: string) {
  const python = (await exec(`${repoRoot}scripts/python-tools.sh`)).stdout.trim();
  const script = `import json, sys
from junitparser import JUnitXml
xml = JUnitXml.fromfile(sys.argv[1])
cases = []
for suite in xml:
    for case in suite:
        results = [{"kind": type(r).__name__, "message": r.message} for r in case.result]
        cases.append({"name": case.name, "results": results, "systemOut": case.system_out})
print(json.dumps({"tests": xml.tests, "failures": xml.failures, "errors": xml.errors, "skipped": xml.skipped, "cases": cases}))`;
  return JSON.parse((await exec(python, ["-c", script, file])).stdout);
}

describe("testrun and quarantined tests", function () {
  // The first use of the Python tools may make their environment.
  this.timeout(120_000);
  let gateway: FakeGateway;
  let dir: string;
  beforeEach(async () => {
    gateway = await FakeGateway.start();
    dir = await mkdtemp(join(tmpdir(), "testrun-quarantine-"));
  });
  afterEach(async () => {
    await gateway.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const wait = async (run: Run, ...flags: string[]) => {
    // A gateway without comparisons: the run alone decides.
    gateway.answer = (request) =>
      request.url.includes("/comparison")
        ? { status: 404, body: { error: "not found", code: "not_found" } }
        : { status: 200, body: run };
    let stdout = "";
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
      stderr: { write: () => {} },
    });
    return { code: result.code, stdout, summary: await readFile(summary, "utf8") };
  };

  it("exits 0 for a run PASSED with a quarantined failure and names it with its reason", async () => {
    const { code, stdout } = await wait(quarantinedRun());
    expect(code).to.equal(0);
    expect(stdout).to.contain("PASSED: 1 passed, 1 failed (1 quarantined) of 2 in 1.2s\n");
    expect(stdout).to.contain(
      [
        "1 quarantined failure (not failing the run):",
        `  log in — ${reason}`,
        "    http://console.example/projects/prj_1/runs/run_1/tests/tr_1",
        "",
      ].join("\n"),
    );
    // Not listed among the failures that fail the run (each of those is followed by its page).
    expect(stdout).to.not.contain(`${got401} (failing since run run_0 (case version 3))\n    http`);
  });

  it("shows each test's health beside its result: quarantined, failing since a run, known flaky", async () => {
    const { stdout } = await wait(quarantinedRun());
    expect(stdout).to.contain("  PASSED  health answers (600ms) (known flaky: 4 of 30 failed)\n");
    expect(stdout).to.contain(
      `  FAILED (quarantined) log in (600ms): ${got401} (failing since run run_0 (case version 3))\n`,
    );
  });

  it("says so when the quarantine was lifted after the run started", async () => {
    const { code, stdout } = await wait(quarantinedRun(null));
    expect(code).to.equal(0);
    expect(stdout).to.contain("  log in — quarantined (no reason shown: lifted since?)\n");
  });

  it("counts it in the job summary and marks the test with its reason", async () => {
    const { summary } = await wait(quarantinedRun());
    expect(summary).to.contain("PASSED: 1 passed, 1 failed (1 quarantined) of 2");
    const row = summary.split("\n").find((line) => line.includes("[log in]"));
    expect(row).to.match(/^\| 🔇 FAILED \(quarantined\) \| \[log in\]/);
    expect(row).to.contain("**quarantined: login is broken upstream, TICKET-40**");
  });

  it("writes a quarantined failure as skipped with its reason, the failure's text in system-out", async () => {
    const junit = join(dir, "quarantine.xml");
    expect((await wait(quarantinedRun(), "--junit", junit)).code).to.equal(0);
    const report = await parseJunit(junit);
    expect(report).to.include({ tests: 2, failures: 0, errors: 0, skipped: 1 });
    const login = report.cases.find((c: { name: string }) => c.name === "log in");
    expect(login.results).to.deep.equal([{ kind: "Skipped", message: `quarantined: ${reason}` }]);
    expect(login.systemOut).to.equal(
      `FAILED (quarantined: ${reason}): ${got401}\nhttp://console.example/projects/prj_1/runs/run_1/tests/tr_1`,
    );
    const xml = await readFile(junit, "utf8");
    expect(xml).to.contain('<property name="testrun.quarantinedFailures" value="1"/>');
  });

  it("still fails a run whose failure is not quarantined, as before", async () => {
    const run = fakeRun("FAILED");
    const { code, stdout } = await wait(run);
    expect(code).to.equal(1);
    expect(stdout).to.contain(`  FAILED  log in (600ms): ${got401}\n    http`);
    expect(stdout).to.not.contain("quarantined");
  });
});
