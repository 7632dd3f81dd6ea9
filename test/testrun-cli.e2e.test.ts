// `testrun`, the pipeline CLI, as a pipeline runs it: a child process with TESTRUN_URL and
// TESTRUN_API_KEY, against the real gateway and every service as a real process. Exit codes,
// messages, reports, and what it does when the gateway or the network fail.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createCliContext, createEnvironment } from "@testrun/cli";
import { fingerprintOf } from "@testrun/kit";
import { type GatewayProcess, repoRoot } from "@testrun/testing";
import { expect } from "chai";
import { Redis } from "ioredis";
import { parse } from "yaml";
import { seedDemo } from "../scripts/demo/seed.js";
import type { System } from "../scripts/system.js";
import { HeldTarget } from "./held-target.js";
import {
  addCases,
  gatewayOnSharedSystem,
  getCase,
  newProject,
  Pipeline,
  type RunBody,
  sharedSystemRedisUrl,
  sharedTestSystem,
} from "./pipeline.js";
import { cliEnv, GatewayProxy, runCli, startCli } from "./testrun-cli.js";

const exec = promisify(execFile);

describe("testrun (the pipeline CLI) against the real system", function () {
  this.timeout(90_000);
  let system: System;
  let pipeline: Pipeline;
  let projectId: string;
  let env: Record<string, string>;
  let held: HeldTarget;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "testrun-cli-"));
    held = await HeldTarget.start();
    system = await sharedTestSystem();
    const demo = await seedDemo(system.env, system.demoTargetUrl);
    projectId = demo.projectId;
    pipeline = new Pipeline(system.gatewayUrl, demo.secret);
    const ctx = createCliContext(system.env);
    await createEnvironment(ctx, { projectId, name: "held", baseUrl: held.url });
    for (const name of ["Twin", "twin"]) await createEnvironment(ctx, { projectId, name, baseUrl: held.url });
    await addCases(system, projectId, getCase("held page", "held", "/held"));
    env = cliEnv(system.gatewayUrl, demo.secret);
  });
  after(async () => {
    await held?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const runOf = async (stdout: string) => {
    const id = /Run (run_[0-9a-z]+)/.exec(stdout)?.[1];
    expect(id, stdout).to.be.a("string");
    return pipeline.getRun(String(id));
  };

  describe("exit codes", () => {
    it("0 for a passing run: the url first, a line per change, the JUnit and JSON reports, the step summary", async () => {
      const junit = join(dir, "pass", "junit.xml");
      const json = join(dir, "pass", "run.json");
      const summary = join(dir, "summary.md");
      const { code, stdout, stderr } = await runCli(
        ["run", "--plan", "Smoke", "--junit", junit, "--json", json],
        { ...env, GITHUB_STEP_SUMMARY: summary },
      );
      expect(code, stdout + stderr).to.equal(0);
      const run = await runOf(stdout);
      expect(run.status).to.equal("PASSED");
      const lines = stdout.trim().split("\n");
      expect(lines[0]).to.equal(`Run ${run.id} "Smoke": ${run.url}`);
      expect(stdout).to.contain("PASSED: 2 passed, 0 failed of 2");
      expect(stdout).to.match(/ {2}PASSED {2}health answers/);
      // Not a terminal: no carriage returns or escape sequences.
      expect(stdout.includes("\r") || stdout.includes("\u001b")).to.equal(false);
      expect(JSON.parse(await readFile(json, "utf8"))).to.deep.equal(run);
      const xml = await readFile(junit, "utf8");
      expect(xml).to.contain('<testsuite name="Smoke" tests="2" failures="0" errors="0" skipped="0"');
      const markdown = await readFile(summary, "utf8");
      expect(markdown).to.contain(`[Smoke](${run.url}) PASSED`);
      expect(markdown).to.contain("| ✅ PASSED | [health answers]");
    });

    it("1 when a test fails, naming it with its summary", async () => {
      const { code, stdout } = await runCli(["run", "--tags", "regression"], env);
      expect(code, stdout).to.equal(1);
      expect(stdout).to.contain("FAILED  a wrong password is forbidden (");
      expect(stdout).to.contain('step 1 "log in with a wrong password": expected status 403, got 401');
    });

    it("2 when the run is skipped, 0 with --allow-skipped", async () => {
      const skipped = await runCli(["run", "--plan", "Smoke", "--env", "unreachable"], env);
      expect(skipped.code, skipped.stdout).to.equal(2);
      expect(skipped.stdout).to.contain("SKIPPED (environment_unreachable)");
      const allowed = await runCli(
        ["run", "--plan", "Smoke", "--env", "unreachable", "--allow-skipped"],
        env,
      );
      expect(allowed.code, allowed.stdout).to.equal(0);
    });

    it("3 when the wait times out; the run goes on and the reports say it did not finish", async () => {
      const release = held.hold("/held");
      try {
        const junit = join(dir, "timeout.xml");
        const { code, stdout } = await runCli(
          ["run", "--tags", "held", "--env", "held", "--timeout", "2s", "--junit", junit],
          env,
        );
        expect(code, stdout).to.equal(3);
        expect(stdout).to.match(/Timed out after 2\.0s: run run_\w+ is still RUNNING/);
        expect(stdout).to.contain("testrun cancel run_");
        const run = await runOf(stdout);
        expect(run.finished).to.equal(false);
        expect(await readFile(junit, "utf8")).to.contain("not finished when the wait timed out");
      } finally {
        release();
      }
    });

    it("4 for an unknown plan, with the API's message", async () => {
      const api = await pipeline.call("POST", "/v1/runs", { testPlan: "no such plan" });
      expect(api.status).to.equal(404);
      const { code, stdout, stderr } = await runCli(["run", "--plan", "no such plan"], env);
      expect(code, stdout + stderr).to.equal(4);
      expect(stderr).to.contain(`testrun: ${api.body.error} (HTTP 404 not_found)`);
      expect(stdout).to.equal("");
    });

    it("4 for an ambiguous name, with the candidates", async () => {
      const api = await pipeline.call("POST", "/v1/runs", { testPlan: "Smoke", environment: "twin" });
      expect(api.status).to.equal(409);
      const candidates = api.body.candidates as string[];
      const { code, stderr } = await runCli(["run", "--plan", "Smoke", "--env", "twin"], env);
      expect(code, stderr).to.equal(4);
      expect(stderr).to.contain(String(api.body.error));
      expect(stderr).to.contain(`candidates: ${candidates.join(", ")}`);
    });

    it("4 when credits are short, with required and available", async () => {
      const poor = await newProject(system, "poor", { credits: 1 });
      await addCases(
        system,
        poor.projectId,
        getCase("one", "two", "/health") + getCase("two", "two", "/health"),
      );
      const { code, stderr } = await runCli(
        ["run", "--tags", "two"],
        cliEnv(system.gatewayUrl, poor.pipeline.key),
      );
      expect(code, stderr).to.equal(4);
      expect(stderr).to.contain("not enough test-run credits: 2 needed, 1 available");
      expect(stderr).to.contain("(HTTP 402 insufficient_credits)");
    });

    it("4 for an unknown key, saying what to check", async () => {
      const { code, stderr } = await runCli(
        ["status", "run_01m80000000000000000000000"],
        cliEnv(system.gatewayUrl, `trk_${"a".repeat(46)}`),
      );
      expect(code).to.equal(4);
      expect(stderr).to.contain("HTTP 401").and.to.contain("check TESTRUN_API_KEY");
    });

    it("5 for a usage error, or when TESTRUN_URL or TESTRUN_API_KEY is missing", async () => {
      const cases: [string[], Record<string, string>, string][] = [
        [["run"], env, "say what to run"],
        [["run", "--plan", "Smoke", "--tags", "a"], env, "only one of"],
        [["run", "--plan", "Smoke", "--timeout", "60"], env, '--timeout "60" is not a duration'],
        [["run", "--plan", "Smoke", "--bogus"], env, "Unknown option '--bogus'"],
        [["frobnicate"], env, 'unknown command "frobnicate"'],
        [["list", "things"], env, '"things" is not one of'],
        [["run", "--plan", "Smoke"], { PATH: env.PATH ?? "" }, "set TESTRUN_URL and TESTRUN_API_KEY"],
      ];
      for (const [args, environment, says] of cases) {
        const { code, stderr } = await runCli(args, environment);
        expect(code, `${args.join(" ")}: ${stderr}`).to.equal(5);
        expect(stderr).to.contain(says);
      }
    });
  });

  describe("other commands", () => {
    it("--no-wait starts the run and exits 0; wait follows it to its end; status prints it", async () => {
      const started = await runCli(["run", "--plan", "Smoke", "--no-wait", "--json", "-"], env);
      expect(started.code, started.stderr).to.equal(0);
      const run = JSON.parse(started.stdout) as RunBody;
      expect(run.status).to.equal("RUNNING");
      expect(started.stderr).to.contain(run.url);
      const waited = await runCli(["wait", run.id], env);
      expect(waited.code, waited.stdout).to.equal(0);
      expect(waited.stdout.split("\n")[0]).to.equal(`Run ${run.id} "Smoke": ${run.url}`);
      const status = await runCli(["status", run.id], env);
      expect(status.code).to.equal(0);
      expect(status.stdout).to.contain("PASSED: 2 passed, 0 failed of 2");
    });

    it("lists plans, environments, cases and runs", async () => {
      const plans = await runCli(["list", "plans"], env);
      expect(plans.stdout).to.match(/^pln_\w+ +Smoke +2 test cases +The checks every deploy must pass$/m);
      const envs = await runCli(["list", "envs"], env);
      expect(envs.stdout).to.match(/^env_\w+ +local +http:\/\/127\.0\.0\.1:\d+ +default$/m);
      const cases = await runCli(["list", "cases", "--tag", "auth", "--json", "-"], env);
      const names = (JSON.parse(cases.stdout).testCases as { name: string }[]).map((c) => c.name);
      expect(names).to.deep.equal(["log in with the demo user", "a wrong password is forbidden"]);
      const runs = await runCli(["list", "runs", "--limit", "2"], env);
      expect(runs.stdout.trim().split("\n")).to.have.length(2);
    });

    it("--help lists the exit codes docs/pipelines.md documents", async () => {
      const { code, stdout } = await runCli(["--help"], {});
      expect(code).to.equal(0);
      const docs = await readFile(`${repoRoot}docs/pipelines.md`, "utf8");
      for (const exit of ["0", "1", "2", "3", "4", "5"]) {
        expect(stdout).to.match(new RegExp(`^ {2}${exit} {2}\\S`, "m"));
        expect(docs).to.match(new RegExp(`^\\| ${exit} \\|`, "m"));
      }
    });
  });

  describe("signals", () => {
    it("SIGTERM with --detach stops waiting but leaves the run going", async () => {
      const release = held.hold("/held");
      try {
        const cli = startCli(["run", "--tags", "held", "--env", "held", "--detach"], env);
        await cli.printed(/Run run_\w+/);
        await held.arrived("/held");
        cli.child.kill("SIGTERM");
        const { code, stdout } = await cli.done;
        expect(code, stdout).to.equal(143);
        expect(stdout).to.contain("SIGTERM: stopped waiting; run");
        expect((await runOf(stdout)).status).to.equal("RUNNING");
      } finally {
        release();
      }
    });
  });

  describe("a gateway that fails a start", () => {
    let proxy: GatewayProxy;
    beforeEach(async () => {
      proxy = await GatewayProxy.start(system.gatewayUrl);
    });
    afterEach(async () => {
      await proxy.stop();
    });

    it("follows the run of a 500 that carries an id, and never posts again", async () => {
      let answered = false;
      proxy.intercept = async (request, forward) => {
        if (request.method !== "POST" || request.path !== "/v1/runs" || answered) return undefined;
        answered = true;
        const real = await forward();
        const { id, url } = JSON.parse(real.body) as RunBody;
        return {
          status: 500,
          body: JSON.stringify({
            error: "the run was started but could not be read back; follow it by its id",
            code: "internal",
            id,
            url,
          }),
        };
      };
      const before = (await pipeline.call("GET", "/v1/runs?limit=100")).body.runs as unknown[];
      const { code, stdout } = await runCli(["run", "--plan", "Smoke"], { ...env, TESTRUN_URL: proxy.url });
      expect(code, stdout).to.equal(0);
      expect(stdout.split("\n")[0]).to.match(
        /^Run run_\w+ was started \(the API could not read it back at once\): http/,
      );
      expect(proxy.count("POST", "/v1/runs")).to.equal(1);
      const after = (await pipeline.call("GET", "/v1/runs?limit=100")).body.runs as unknown[];
      expect(after.length - before.length).to.equal(1);
    });

    it("does not repeat a start that got no answer when the gateway takes no Idempotency-Key", async () => {
      proxy.intercept = async (request, forward) => {
        // An older gateway: no OpenAPI document, so no Idempotency-Key.
        if (request.path === "/v1/openapi.json") return { status: 404, body: '{"error":"not found"}' };
        if (request.method !== "POST") return undefined;
        await forward();
        return "drop";
      };
      const before = (await pipeline.call("GET", "/v1/runs?limit=100")).body.runs as unknown[];
      const { code, stderr } = await runCli(["run", "--plan", "Smoke"], { ...env, TESTRUN_URL: proxy.url });
      expect(code, stderr).to.equal(4);
      expect(stderr).to.contain("a run may have started (see `testrun list runs`)");
      expect(proxy.count("POST", "/v1/runs")).to.equal(1);
      expect(proxy.requests.find((r) => r.method === "POST")?.headers["idempotency-key"]).to.match(
        /^[0-9a-f-]{36}$/,
      );
      const after = (await pipeline.call("GET", "/v1/runs?limit=100")).body.runs as unknown[];
      expect(after.length - before.length).to.equal(1);
    });
  });

  describe("reports read by others", () => {
    it("JUnit XML is read by Python's junitparser: tests, failures with their summary, times, skipped", async () => {
      const python = (await exec(`${repoRoot}scripts/python-tools.sh`)).stdout.trim();
      const failing = join(dir, "failing.xml");
      const skipped = join(dir, "skipped.xml");
      const failed = await runCli(["run", "--tags", "regression,smoke", "--junit", failing], env);
      expect(failed.code).to.equal(1);
      await runCli(["run", "--plan", "Smoke", "--env", "unreachable", "--junit", skipped], env);
      const read = async (file: string) =>
        JSON.parse(
          (
            await exec(python, [
              "-c",
              `import json, sys
from junitparser import JUnitXml, Failure, Skipped, Error
xml = JUnitXml.fromfile(sys.argv[1])
suites = [s for s in xml]
out = {"tests": xml.tests, "failures": xml.failures, "errors": xml.errors, "skipped": xml.skipped, "suites": []}
for suite in suites:
    cases = []
    for case in suite:
        results = [{"kind": type(r).__name__, "message": r.message} for r in case.result]
        cases.append({"name": case.name, "classname": case.classname, "time": case.time,
                      "passed": case.is_passed, "skipped": case.is_skipped, "results": results})
    out["suites"].append({"name": suite.name, "tests": suite.tests, "failures": suite.failures,
                          "skipped": suite.skipped, "time": suite.time, "cases": cases})
print(json.dumps(out))`,
              file,
            ])
          ).stdout,
        );
      const failedRun = await runOf(failed.stdout);
      const report = await read(failing);
      expect(report).to.include({ tests: 4, failures: 1, errors: 0, skipped: 0 });
      const [suite] = report.suites;
      expect(suite.name).to.equal(failedRun.name);
      expect(suite.cases).to.have.length(failedRun.tests.length);
      for (const test of failedRun.tests) {
        const found = suite.cases.find((c: { name: string }) => c.name === test.name);
        expect(found.time).to.be.closeTo((test.durationMs ?? 0) / 1000, 0.001);
        expect(found.classname).to.equal(failedRun.name);
        if (test.status === "FAILED") {
          expect(found.results).to.deep.equal([{ kind: "Failure", message: test.summary }]);
        } else {
          expect(found.passed, test.name).to.equal(true);
        }
      }
      const skippedReport = await read(skipped);
      expect(skippedReport).to.include({ tests: 2, failures: 0, skipped: 2 });
      for (const found of skippedReport.suites[0].cases) {
        expect(found.skipped).to.equal(true);
        expect(found.results[0].kind).to.equal("Skipped");
      }
    });
  });

  describe("the GitHub Action, run as the runner runs it", () => {
    /** The environment the runner gives the action: every input (defaults of action.yml) as INPUT_<NAME>. */
    const actionEnv = async (inputs: Record<string, string>, files: { output: string; summary: string }) => {
      const action = parse(await readFile(`${repoRoot}action.yml`, "utf8")) as {
        inputs: Record<string, { default?: string }>;
        runs: { using: string; main: string };
      };
      const all: Record<string, string> = {};
      for (const [name, spec] of Object.entries(action.inputs)) all[name] = spec.default ?? "";
      Object.assign(all, inputs);
      return {
        PATH: String(process.env.PATH),
        GITHUB_ACTIONS: "true",
        GITHUB_OUTPUT: files.output,
        GITHUB_STEP_SUMMARY: files.summary,
        ...Object.fromEntries(
          Object.entries(all).map(([name, value]) => [
            `INPUT_${name.replace(/ /g, "_").toUpperCase()}`,
            value,
          ]),
        ),
      };
    };
    /** GITHUB_OUTPUT as the runner reads it: name=value lines and name<<DELIMITER blocks. */
    const readOutputs = async (file: string) => {
      const lines = (await readFile(file, "utf8")).split("\n");
      const outputs: Record<string, string> = {};
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i] ?? "";
        const block = /^([^=<]+)<<(.+)$/.exec(line);
        if (block) {
          const end = lines.indexOf(block[2] ?? "", i + 1);
          outputs[block[1] ?? ""] = lines.slice(i + 1, end).join("\n");
          i = end;
        } else if (line.includes("=")) {
          outputs[line.slice(0, line.indexOf("="))] = line.slice(line.indexOf("=") + 1);
        }
      }
      return outputs;
    };
    const files = (name: string) => ({
      output: join(dir, `${name}.output`),
      summary: join(dir, `${name}.md`),
    });

    it("is a node24 action whose main is the committed bundle", async () => {
      const action = parse(await readFile(`${repoRoot}action.yml`, "utf8")) as {
        runs: Record<string, string>;
      };
      expect(action.runs).to.deep.equal({ using: "node24", main: "action/index.mjs" });
    });

    it("passes a passing run: outputs run-id, url and status, the summary, the JUnit file, the key masked", async () => {
      const paths = files("action-pass");
      const junit = join(dir, "action", "junit.xml");
      const environment = await actionEnv(
        { plan: "Smoke", junit, "api-url": system.gatewayUrl, "api-key": pipeline.key },
        paths,
      );
      const { code, stdout, stderr } = await runCli([], environment, `${repoRoot}action/index.mjs`);
      expect(code, stdout + stderr).to.equal(0);
      expect(stdout.split("\n")[0]).to.equal(`::add-mask::${pipeline.key}`);
      const outputs = await readOutputs(paths.output);
      const run = await pipeline.getRun(String(outputs["run-id"]));
      expect(outputs).to.deep.equal({ "run-id": run.id, url: run.url, status: "PASSED" });
      expect(await readFile(paths.summary, "utf8")).to.contain(`[Smoke](${run.url}) PASSED`);
      expect(await readFile(junit, "utf8")).to.contain('<testsuite name="Smoke" tests="2"');
      expect(stdout).not.to.contain("::error");
    });

    it("fails the step on a failing run, with an error annotation; the key may come from TESTRUN_API_KEY", async () => {
      const paths = files("action-fail");
      const environment = {
        ...(await actionEnv({ tags: "regression", "api-url": system.gatewayUrl }, paths)),
        TESTRUN_API_KEY: pipeline.key,
      };
      const { code, stdout } = await runCli([], environment, `${repoRoot}action/index.mjs`);
      expect(code, stdout).to.equal(1);
      expect(stdout).to.match(
        /^::error title=Testrun::Run tags: regression FAILED: 1 passed, 1 failed of 2 \(exit code 1\) http/m,
      );
      expect((await readOutputs(paths.output)).status).to.equal("FAILED");
    });

    it("fails with exit code 4 and the API's message as the annotation when the start is refused", async () => {
      const paths = files("action-refused");
      const environment = await actionEnv(
        { plan: "no such plan", "api-url": system.gatewayUrl, "api-key": pipeline.key },
        paths,
      );
      const { code, stdout } = await runCli([], environment, `${repoRoot}action/index.mjs`);
      expect(code).to.equal(4);
      expect(stdout).to.match(/^::error title=Testrun::exit code 4%0Atestrun: .*HTTP 404 not_found/m);
      expect(await readOutputs(paths.output)).to.deep.equal({ "run-id": "", url: "", status: "" });
    });

    it("refuses a malformed input with exit code 5", async () => {
      const paths = files("action-input");
      const environment = await actionEnv(
        { plan: "Smoke", wait: "maybe", "api-url": system.gatewayUrl, "api-key": pipeline.key },
        paths,
      );
      const { code, stdout } = await runCli([], environment, `${repoRoot}action/index.mjs`);
      expect(code).to.equal(5);
      expect(stdout).to.contain('::error title=Testrun::input wait must be true or false, not "maybe"');
    });
  });
});

describe("testrun under a small rate limit", function () {
  // The key's window is cut to `shortWindowMs` below: the 429 is waited out for up to that long.
  this.timeout(60_000);
  const limit = 3;
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

  it("waits out a 429 met while waiting, for as long as Retry-After says, and still reports the run", async () => {
    // Use up all but one request of the key's window: the CLI's start is the last one allowed, and
    // its first read of the run gets 429.
    for (let i = 0; i < limit - 1; i++)
      expect((await pipeline.call("GET", "/v1/project")).status).to.equal(200);
    // The window ends when its counter expires (services/gateway/src/limits.ts): bring that end
    // from a minute to `shortWindowMs` away, so the wait is real but not a minute long. The CLI
    // must start within it (its start is the last request allowed), hence some seconds of room.
    const shortWindowMs = 15_000;
    const redis = new Redis(sharedSystemRedisUrl());
    const windowEnd = Date.now() + shortWindowMs;
    try {
      expect(
        await redis.pexpire(`testrun:gateway:rate:${fingerprintOf(pipeline.key)}`, shortWindowMs),
      ).to.equal(1);
    } finally {
      redis.disconnect();
    }
    const { code, stdout, stderr } = await runCli(
      ["run", "--plan", "Smoke"],
      cliEnv(gateway.http, pipeline.key),
    );
    expect(code, stdout + stderr).to.equal(0);
    expect(stdout, stdout).to.match(/\(HTTP 429 rate_limited: .*; trying again in (\d+s|1m)\)/);
    expect(stdout).to.contain("PASSED: 2 passed, 0 failed of 2");
    // The start came before the 429: one run, and the wait went on past it.
    const lines = stdout.split("\n");
    expect(lines[0]).to.match(/^Run run_\w+ "Smoke": http/);
    expect(lines.findIndex((line) => line.includes("HTTP 429"))).to.be.greaterThan(0);
    const runs = await pipeline.call("GET", "/v1/runs");
    expect(runs.body.runs).to.have.length(1);
    // It read again only once the key's window had ended.
    expect(Date.now()).to.be.at.least(windowEnd);
  });
});
