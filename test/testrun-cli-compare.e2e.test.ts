// `testrun` against its base run (issue 41), a child process against the whole system: the last
// line says what is new, still failing and flaky with the comparison's link, the JUnit report and
// the job summary say the same, and --fail-on new-failures fails the job only for new failures.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCliContext, importContent, readCaseFile } from "@testrun/cli";
import { expect } from "chai";
import type { System } from "../scripts/system.js";
import { addCases, newProject, type Pipeline, sharedTestSystem } from "./pipeline.js";
import { cliEnv, runCli } from "./testrun-cli.js";

const caseYaml = (name: string, path: string, status: number) =>
  `- name: ${name}\n  tags: [compared]\n  steps:\n    - name: open it\n      http: { method: GET, path: "${path}" }\n      expect: { status: ${status} }\n`;

describe("testrun against the base run: new failures, the last line and --fail-on new-failures", function () {
  this.timeout(90_000);
  let system: System;
  let projectId: string;
  let pipeline: Pipeline;
  let env: Record<string, string>;
  let dir: string;
  const runIds: string[] = [];

  const run = async (...extra: string[]) => {
    const junit = join(dir, `junit-${runIds.length + 1}.xml`);
    const summary = join(dir, `summary-${runIds.length + 1}.md`);
    const result = await runCli(["run", "--tags", "compared", "--junit", junit, ...extra], {
      ...env,
      GITHUB_STEP_SUMMARY: summary,
    });
    const id = /Run (run_[0-9a-z]+)/.exec(result.stdout)?.[1] ?? "";
    runIds.push(id);
    const lines = result.stdout.trim().split("\n");
    return {
      ...result,
      id,
      last: lines.at(-1) ?? "",
      beforeLast: lines.at(-2) ?? "",
      junit: await readFile(junit, "utf8"),
      summary: await readFile(summary, "utf8"),
    };
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "testrun-compare-"));
    system = await sharedTestSystem();
    const project = await newProject(system, "compared", { credits: 50 });
    projectId = project.projectId;
    pipeline = project.pipeline;
    env = cliEnv(system.gatewayUrl, pipeline.key);
    await addCases(
      system,
      projectId,
      caseYaml("home answers", "/health", 200) +
        caseYaml("missing page", "/no-such-page", 200) +
        caseYaml("health answers", "/health", 200),
    );
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("says there is no base run on the first run, and fails it as before", async () => {
    const first = await run();
    expect(first.code, first.stdout).to.equal(1);
    const body = await pipeline.getRun(first.id);
    expect(first.last).to.equal(`No base run to compare with — ${body.url}`);
    expect(first.junit).not.to.contain("testrun.baseRunId");
    expect(first.junit).to.match(/<property name="testrun.failureGroup" value="fg_[0-9a-z]{26}"\/>/);
  });

  it("passes a run whose only failure is known with --fail-on new-failures, warning, and says since when", async () => {
    const second = await run("--fail-on", "new-failures");
    const [first] = runIds;
    const body = await pipeline.getRun(second.id);
    expect(second.code, second.stdout).to.equal(0);
    expect(second.beforeLast).to.equal(
      "Warning: 1 test failed, none of them new against the base run: exit 0 (--fail-on new-failures)",
    );
    expect(second.last).to.equal(
      `0 new failures, 1 still failing (since run ${first}), 0 flaky against run ${first} — compare: ${body.url}/compare`,
    );
    expect(second.junit).to.contain('<property name="testrun.newFailures" value="0"/>');
    expect(second.junit).to.contain(`<property name="testrun.baseRunId" value="${first}"/>`);
    // The failed test's own properties: known, and its group.
    const missing = /<testcase name="missing page"[^>]*>\s*<properties>([\s\S]*?)<\/properties>/.exec(
      second.junit,
    );
    expect(missing?.[1]).to.contain('<property name="testrun.newFailure" value="false"/>');
    expect(missing?.[1]).to.match(/testrun.failureGroup" value="fg_/);
    expect(second.summary).to.contain(`**Against the base run:** 0 new failures, 1 still failing`);
  });

  it("fails with --fail-on new-failures when one more test breaks: exactly one new failure, named", async () => {
    await importContent(createCliContext(system.env), {
      projectId,
      document: readCaseFile(caseYaml("health answers", "/health", 201), "cases.yaml"),
    });
    const third = await run("--fail-on", "new-failures");
    const body = await pipeline.getRun(third.id);
    expect(third.code, third.stdout).to.equal(1);
    expect(third.last).to.equal(
      `1 new failure, 1 still failing (since run ${runIds[0]}), 0 flaky against run ${runIds[1]} — compare: ${body.url}/compare`,
    );
    expect(third.junit).to.contain('<property name="testrun.newFailures" value="1"/>');
    const health = /<testcase name="health answers"[^>]*>\s*<properties>([\s\S]*?)<\/properties>/.exec(
      third.junit,
    );
    expect(health?.[1]).to.contain('<property name="testrun.newFailure" value="true"/>');
    expect(third.summary).to.contain("New failures:\n\n- health answers\n");
  });

  it("without the option, known failures still fail the job (exit 1), and the last line says they are known", async () => {
    const fourth = await run();
    expect(fourth.code, fourth.stdout).to.equal(1);
    expect(fourth.last).to.match(
      /^0 new failures, 2 still failing \(since run run_\w+\), 0 flaky against run /,
    );
    expect(fourth.stdout).not.to.contain("Warning: ");
  });

  it("refuses an unknown --fail-on value as a usage error (exit 5)", async () => {
    const { code, stderr } = await runCli(["run", "--tags", "compared", "--fail-on", "everything"], env);
    expect(code).to.equal(5);
    expect(stderr).to.contain('--fail-on "everything" is not known: the only value is new-failures');
  });
});
