// The parts of `testrun` that need no gateway: the command line, durations, the JUnit document,
// the step summary, the Action's inputs and outputs, the version.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Artifact,
  artifactsInOrder,
  failureScreenshot,
  type TestResult,
  version,
} from "@testrun/api-client";
import { expect } from "chai";
import { argvOf, input, setOutput } from "../src/action.js";
import { defaultTimeoutMs, parseCommand, UsageError } from "../src/args.js";
import { artifactPath, attachmentPath, safeName } from "../src/artifacts.js";
import { formatDuration, parseDuration } from "../src/duration.js";
import { escapeXml, junitXml } from "../src/junit.js";
import { Progress } from "../src/progress.js";
import { markdownSummary } from "../src/summary.js";
import { fakeRun } from "./fake-gateway.js";

describe("testrun's command line", () => {
  it("parses run with each selection and its wait options", () => {
    expect(parseCommand(["run", "--plan", "Smoke"])).to.deep.equal({
      name: "run",
      body: { testPlan: "Smoke" },
      wait: true,
      timeoutMs: defaultTimeoutMs,
      cancelOnTimeout: false,
      detach: false,
      allowSkipped: false,
    });
    expect(
      parseCommand([
        "run",
        "--tags",
        "smoke, auth,",
        "--env",
        "staging",
        "--name",
        "nightly",
        "--timeout",
        "1h30m",
      ]),
    ).to.deep.include({
      body: { tags: ["smoke", "auth"], environment: "staging", name: "nightly" },
      timeoutMs: 90 * 60_000,
    });
    expect(
      parseCommand([
        "run",
        "--cases",
        "tc_1,tc_2",
        "--cancel-on-timeout",
        "--detach",
        "--allow-skipped",
        "--junit",
        "j.xml",
        "--json",
        "-",
      ]),
    ).to.deep.include({
      body: { testCaseIds: ["tc_1", "tc_2"] },
      cancelOnTimeout: true,
      detach: true,
      allowSkipped: true,
      junit: "j.xml",
      json: "-",
    });
    expect(parseCommand(["run", "--plan", "Smoke", "--no-wait"])).to.deep.include({ wait: false });
    expect(parseCommand(["wait", "run_1", "--artifacts", "out"])).to.deep.include({ artifacts: "out" });
  });

  it("parses the other commands", () => {
    expect(parseCommand(["rerun", "run_1", "--failed"])).to.deep.include({
      name: "rerun",
      runId: "run_1",
      failedOnly: true,
    });
    expect(parseCommand(["wait", "run_1", "--timeout", "30m"])).to.deep.include({
      name: "wait",
      timeoutMs: 1_800_000,
    });
    expect(parseCommand(["status", "run_1", "--json", "-"])).to.deep.equal({
      name: "status",
      runId: "run_1",
      json: "-",
    });
    expect(parseCommand(["cancel", "run_1"])).to.deep.equal({ name: "cancel", runId: "run_1" });
    expect(parseCommand(["list", "cases", "--tag", "a", "--tag", "b", "--search", "log"])).to.deep.equal({
      name: "list",
      what: "cases",
      tags: ["a", "b"],
      search: "log",
    });
    expect(parseCommand(["list", "environments"])).to.deep.include({ what: "envs" });
    expect(parseCommand(["list", "runs", "--limit", "5"])).to.deep.include({ limit: 5 });
    expect(parseCommand([])).to.deep.equal({ name: "help" });
    expect(parseCommand(["run", "--help"])).to.deep.equal({ name: "help", topic: "run" });
    expect(parseCommand(["--version"])).to.deep.equal({ name: "version" });
  });

  it("refuses what is wrong, saying what to write instead", () => {
    const refusals: [string[], RegExp][] = [
      [["run"], /one of --plan NAME\|ID, --tags a,b or --cases ID,ID/],
      [
        ["run", "--plan", "a", "--cases", "b"],
        /only one of --plan, --tags and --cases \(got --plan, --cases\)/,
      ],
      [["run", "--tags", " , "], /--tags needs at least one item/],
      [["run", "--plan", " "], /--plan needs a value/],
      [["run", "--plan", "a", "--timeout", "10"], /write 90s, 30m, 1h or 1h30m/],
      [["run", "--plan", "a", "--no-wait", "--junit", "x"], /--junit has no use with --no-wait/],
      [["run", "--plan", "a", "extra"], /unexpected "extra"/],
      [["wait"], /RUN_ID is missing/],
      [["wait", "run_1", "--no-wait"], /Unknown option '--no-wait'/],
      [["list", "runs", "--limit", "101"], /from 1 to 100/],
      [["list", "plans", "--tag", "x"], /apply to `list cases` only/],
      [["deploy"], /unknown command "deploy"/],
    ];
    for (const [argv, message] of refusals) {
      expect(() => parseCommand(argv), argv.join(" ")).to.throw(UsageError, message);
    }
  });

  it("passes --retries 0 to 3 on as the start's retries, and refuses anything else", () => {
    const run = parseCommand(["run", "--plan", "Smoke", "--retries", "2"]);
    expect(run.name === "run" && run.body).to.deep.equal({ testPlan: "Smoke", retries: 2 });
    const none = parseCommand(["run", "--tags", "smoke", "--retries", "0"]);
    expect(none.name === "run" && none.body).to.deep.equal({ tags: ["smoke"], retries: 0 });
    const unset = parseCommand(["run", "--plan", "Smoke"]);
    expect(unset.name === "run" && unset.body, "unset: the plan's, else each case's").to.not.have.property(
      "retries",
    );
    for (const bad of ["4", "-1", "x", "1.5"]) {
      expect(() => parseCommand(["run", "--plan", "a", `--retries=${bad}`]), bad).to.throw(
        UsageError,
        `--retries must be a whole number from 0 to 3 (got "${bad}")`,
      );
    }
    expect(() => parseCommand(["rerun", "run_1", "--retries", "1"])).to.throw(UsageError, /--retries/);
  });

  it("reads and writes durations", () => {
    expect(parseDuration("90s")).to.equal(90_000);
    expect(parseDuration("1h30m")).to.equal(5_400_000);
    expect(parseDuration("500ms")).to.equal(500);
    expect(parseDuration("1.5m")).to.equal(90_000);
    for (const bad of ["", "10", "m", "-5m", "0s", "5 m", "5d"])
      expect(parseDuration(bad), bad).to.equal(undefined);
    expect(formatDuration(84)).to.equal("84ms");
    expect(formatDuration(1234)).to.equal("1.2s");
    expect(formatDuration(3_725_000)).to.equal("1h 2m 5s");
  });

  it("has the version of its package.json", async () => {
    const pkg = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    expect(version).to.equal(pkg.version);
  });
});

describe("testrun's progress lines", () => {
  const running = (done: number) => {
    const run = fakeRun("RUNNING");
    run.tests.forEach((test, i) => {
      if (i < done) Object.assign(test, { status: "PASSED", durationMs: 84 });
    });
    run.passedTests = done;
    return run;
  };

  it("prints one line per change on a CI log, and a line per finished test", () => {
    let out = "";
    const progress = new Progress({ write: (text) => (out += text) });
    progress.update(running(0));
    progress.update(running(0));
    progress.update(running(1));
    progress.update(fakeRun("PASSED"));
    expect(out).to.equal(
      [
        "RUNNING: 0 of 2 done, 0 passed, 0 failed",
        "  PASSED  health answers (84ms)",
        "RUNNING: 1 of 2 done, 1 passed, 0 failed",
        "  PASSED  log in (600ms)",
        "",
      ].join("\n"),
    );
  });

  it("keeps one live line on a terminal, with the finished tests above it", () => {
    let out = "";
    const progress = new Progress({ write: (text) => (out += text), isTTY: true });
    progress.update(running(0));
    progress.update(running(1));
    progress.update(fakeRun("FAILED"));
    const screen = out.split("\r\u001b[2K");
    expect(screen[1]).to.match(/^RUNNING: 0 of 2 done, 0 passed, 0 failed · waiting 0s$/);
    expect(screen).to.include("  PASSED  health answers (84ms)\n");
    expect(out.endsWith("\r\u001b[2K")).to.equal(true);
    expect(out).to.contain('  FAILED  log in (600ms): step 1 "log in": expected status 200, got 401\n');
  });
});

describe("testrun's reports", () => {
  it("escapes everything XML cannot carry as is, and drops what it cannot carry at all", () => {
    expect(escapeXml(`a<b>&"c"'d'`)).to.equal("a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;");
    expect(escapeXml("line\none\ttab\r")).to.equal("line&#10;one&#9;tab&#13;");
    expect(escapeXml("bell\u0007 nul\u0000 ok ✓ 🎉")).to.equal("bell nul ok ✓ 🎉");
    expect(escapeXml("lone \ud800 surrogate")).to.equal("lone  surrogate");
  });

  it("writes one testcase per test: failure message = summary, times in seconds, skipped marked", () => {
    const failed = fakeRun("FAILED");
    const xml = junitXml(failed);
    expect(xml).to.contain(
      '<testsuite name="Smoke" tests="2" failures="1" errors="0" skipped="0" time="1.200" timestamp="2026-11-22T10:15:30.123" id="run_1"',
    );
    expect(xml).to.contain('<testcase name="health answers" classname="Smoke" time="0.600">');
    expect(xml).to.contain(
      '<failure message="step 1 &quot;log in&quot;: expected status 200, got 401" type="FAILED">',
    );
    expect(xml).to.contain(
      '<property name="testrun.run.url" value="http://console.example/projects/prj_1/runs/run_1"/>',
    );
    const skipped = junitXml(fakeRun("SKIPPED"));
    expect(skipped.match(/<skipped message="skipped: environment_unreachable"\/>/g)).to.have.length(2);
    const running = junitXml(fakeRun("RUNNING"), { timedOut: true });
    expect(running).to.contain('errors="2"');
    expect(running).to.contain(
      '<error message="not finished when the wait timed out (QUEUED)" type="QUEUED"/>',
    );
  });

  it("keeps a hostile test name inside its attribute and the summary table inside its cell", () => {
    const run = fakeRun("FAILED");
    const [first] = run.tests;
    if (first) first.name = `"/><evil a="|`;
    expect(junitXml(run)).to.contain('name="&quot;/&gt;&lt;evil a=&quot;|"');
    expect(markdownSummary(run)).to.contain('["/&gt;&lt;evil a="\\|](');
  });

  it("summarises a run in Markdown for the step summary", () => {
    const markdown = markdownSummary(fakeRun("FAILED"));
    expect(markdown).to.contain(
      "### ❌ Testrun: [Smoke](http://console.example/projects/prj_1/runs/run_1) FAILED",
    );
    expect(markdown).to.contain("FAILED: 0 passed, 1 failed of 2 in 1.2s");
    expect(markdown).to.contain(
      '| ❌ FAILED | [log in](http://console.example/projects/prj_1/runs/run_1/tests/tr_1) | 600ms | step 1 "log in": expected status 200, got 401 |',
    );
  });
});

describe("testrun's artifact files", () => {
  const test = { ...fakeRun("FAILED").tests[1], id: "tr_1" } as TestResult;
  const artifact: Artifact = {
    id: "art_1",
    kind: "screenshot",
    name: "failure",
    contentType: "image/png",
    size: 10,
    step: 2,
    url: "http://api.example/v1/runs/run_1/tests/tr_1/artifacts/art_1",
  };

  it("names a file after its test, step, name and id, in letters, digits, dot, dash and underscore", () => {
    expect(artifactPath("/ci/out", test, artifact)).to.equal("/ci/out/log-in-tr_1/2-failure-art_1.png");
    const hostile = { ...test, name: "../../etc/passwd", id: "../tr_2" };
    const nasty = { ...artifact, name: "..\\..\\évil: <shot>", id: "/art_2", contentType: "text/html" };
    expect(artifactPath("/ci/out", hostile, nasty)).to.equal("/ci/out/etc-passwd-tr_2/2-evil-shot-art_2.bin");
    // Nothing left of a name: its kind stands in; a step that is not a number counts as 0.
    const empty = { ...artifact, name: "...", step: "../x" as unknown as number };
    expect(artifactPath("/ci/out", { ...test, name: "//" }, empty)).to.equal(
      "/ci/out/test-tr_1/0-screenshot-art_1.png",
    );
    expect(safeName("a".repeat(100), "x")).to.have.length(60);
  });

  it("names attachments relative to CI_PROJECT_DIR inside it, else absolute", () => {
    const file = "/builds/team/app/out/t/1-failure-art_1.png";
    expect(attachmentPath(file, { CI_PROJECT_DIR: "/builds/team/app" })).to.equal(
      "out/t/1-failure-art_1.png",
    );
    expect(attachmentPath(file, { CI_PROJECT_DIR: "/builds/team/other" })).to.equal(file);
    expect(attachmentPath(file, {})).to.equal(file);
  });

  it("puts a failed test's failure screenshot first, else its first screenshot", () => {
    const home = { ...artifact, id: "art_0", name: "home", step: 1 };
    const trace = { ...artifact, id: "art_t", kind: "trace" as const, name: "trace", step: 0 };
    expect(failureScreenshot({ ...test, artifacts: [trace, home, artifact] })).to.equal(artifact);
    expect(failureScreenshot({ ...test, artifacts: [trace, home] })).to.equal(home);
    expect(failureScreenshot({ ...test, artifacts: [trace] })).to.equal(undefined);
    expect(artifactsInOrder({ ...test, artifacts: [trace, home, artifact] })).to.deep.equal([
      artifact,
      trace,
      home,
    ]);
  });
});

describe("the GitHub Action's inputs and outputs", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "testrun-action-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("reads inputs as the runner names them", () => {
    const env = { "INPUT_API-KEY": " k ", INPUT_PLAN: "Smoke", "INPUT_CANCEL-ON-TIMEOUT": "true" };
    expect(input(env, "api-key")).to.equal("k");
    expect(
      argvOf({ ...env, INPUT_TIMEOUT: "30m", INPUT_WAIT: "true", "INPUT_ALLOW-SKIPPED": "false" }),
    ).to.deep.equal(["run", "--plan", "Smoke", "--timeout", "30m", "--cancel-on-timeout"]);
    expect(argvOf({ INPUT_PLAN: "Smoke", INPUT_JUNIT: "j.xml", INPUT_ARTIFACTS: "shots" })).to.deep.equal([
      "run",
      "--plan",
      "Smoke",
      "--junit",
      "j.xml",
      "--artifacts",
      "shots",
    ]);
    expect(argvOf({ INPUT_TAGS: "a,b", INPUT_WAIT: "false", INPUT_JSON: "run.json" })).to.deep.equal([
      "run",
      "--tags",
      "a,b",
      "--json",
      "run.json",
      "--no-wait",
    ]);
  });

  it("writes outputs in GITHUB_OUTPUT's multi-line form, safe for any value", async () => {
    const file = join(dir, "output");
    setOutput(file, "url", "http://x/runs/run_1");
    setOutput(file, "note", "two\nlines");
    const text = await readFile(file, "utf8");
    const match =
      /^url<<(ghadelimiter_[0-9a-f-]{36})\nhttp:\/\/x\/runs\/run_1\n\1\nnote<<(ghadelimiter_[0-9a-f-]{36})\ntwo\nlines\n\2\n$/.exec(
        text,
      );
    expect(match, text).to.not.equal(null);
  });
});
