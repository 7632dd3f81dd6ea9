// The variable values of the tests an executor claims together, read in one call: the executor,
// the real runs and catalog services (in-process, their PostgreSQL and Redis) and the catalog's log,
// steps against a real HTTP server that answers only the right credentials.
import { RunStatus, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  eventually,
  type InProcessRunsStack,
  operator,
  type RunsProject,
  seedRunsProject,
  startInProcessRunsStack,
} from "@testrun/testing";
import { expect } from "chai";
import { localTargetsEgress } from "../../../scripts/system.js";
import { type InProcessExecutor, startExecutor } from "./in-process.js";
import { startTestTarget, type TestTarget } from "./target.js";

/** The catalog's audit line of a read, as its JSON log writes it. */
interface AuditLine {
  msg: string;
  level: string;
  tests?: number;
  projects?: { project_id: string; variables: number; test_result_ids: string[] }[];
  test_result_id?: string;
}

describe("executor: variable values of a claimed batch", function () {
  this.timeout(60_000);
  let stack: InProcessRunsStack;
  let target: TestTarget;
  let executor: InProcessExecutor | undefined;

  before(async () => {
    // The catalog at debug: each read's line (with its tests) is at debug, a summary at info.
    stack = await startInProcessRunsStack({}, 6, { LOG_LEVEL: "debug" });
    target = await startTestTarget();
  });
  afterEach(async () => {
    await executor?.stop();
    executor = undefined;
  });
  after(async () => {
    await target?.close();
    await stack?.stop();
  });

  /** A project on the target whose USER and PASSWORD variables log in there. */
  async function projectWithCredentials(): Promise<{ project: RunsProject; environmentId: string }> {
    const { catalog } = stack.catalog;
    const project = await seedRunsProject(stack);
    const { projectId } = project;
    const { environment } = await catalog.createEnvironment({
      actor: operator(),
      projectId,
      name: "test target",
      baseUrl: target.url,
    });
    await catalog.createVariable({ actor: operator(), projectId, name: "USER", value: "alice" });
    await catalog.createVariable({ actor: operator(), projectId, name: "PASSWORD", value: "s3cret" });
    return { project, environmentId: environment?.id ?? "" };
  }

  /** Starts a run of `count` tests that log in with the project's variables (401 without them). */
  async function startLogins(
    { project, environmentId }: { project: RunsProject; environmentId: string },
    count: number,
  ) {
    const { projectId } = project;
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const { testCase } = await stack.catalog.catalog.createTestCase({
        actor: operator(),
        projectId,
        name: `log in ${i + 1}`,
        tags: [],
        enabled: true,
        steps: [
          {
            name: "log in",
            kind: {
              case: "http",
              value: {
                request: {
                  method: "POST",
                  path: "/login",
                  headers: { "content-type": "application/json" },
                  body: { case: "raw", value: '{"user":"{{USER}}","password":"{{PASSWORD}}"}' },
                },
                expect: { status: [200] },
              },
            },
          },
        ],
      });
      ids.push(testCase?.id ?? "");
    }
    const { run } = await stack.runs.startRun({
      actor: project.key,
      projectId,
      environment: environmentId,
      selection: { case: "testCaseIds", value: { ids } },
    });
    return { project, runId: run?.id ?? "", testIds: run?.tests.map((test) => test.id) ?? [] };
  }

  const finished = ({ project, runId }: { project: RunsProject; runId: string }) =>
    eventually(async () => {
      const { run } = await stack.runs.getRun({ actor: project.key, projectId: project.projectId, runId });
      return run?.finishedAt ? run : undefined;
    }, `run ${runId} to finish`);

  /** The catalog's audit lines that name any of `testIds`. */
  const auditLinesOf = (testIds: string[]): AuditLine[] =>
    stack.catalog
      .lines()
      .map((line) => JSON.parse(line) as AuditLine)
      .filter(
        (line) =>
          line.msg === "executor read variable values" &&
          testIds.some((id) => JSON.stringify(line).includes(id)),
      );

  /** An executor that finds the runs already queued: its first read takes all their tests at once. */
  const executorTakingAll = async () => {
    executor = await startExecutor(stack, {
      ...localTargetsEgress,
      CONCURRENCY: "8",
      EXECUTOR_STEP_KINDS: "http",
    });
  };

  it("reads the values of the tests it claimed together in one call, each project's once", async () => {
    const a = await startLogins(await projectWithCredentials(), 3);
    const b = await startLogins(await projectWithCredentials(), 2);
    await executorTakingAll();

    for (const run of [a, b]) expect(await finished(run)).to.include({ status: RunStatus.PASSED });
    const testIds = [...a.testIds, ...b.testIds];
    // One audit line for the five tests, at info, naming each project once with its tests.
    const lines = auditLinesOf(testIds);
    expect(lines).to.have.length(1);
    expect(lines[0]).to.include({ level: "debug", tests: 5 });
    expect(lines[0]?.projects).to.have.deep.members([
      { project_id: a.project.projectId, variables: 2, test_result_ids: a.testIds },
      { project_id: b.project.projectId, variables: 2, test_result_ids: b.testIds },
    ]);
  });

  it("reads each test's values alone when its batch is refused: one project's unreadable values fail only its tests", async () => {
    const good = await startLogins(await projectWithCredentials(), 2);
    const broken = await projectWithCredentials();
    // The broken project's values no longer decrypt (a ciphertext moved onto another variable):
    // the catalog refuses every read of them, and so the batch holding one of its tests.
    await stack.catalog.db.query(
      `update catalog.variables b set value_ciphertext = a.value_ciphertext, value_iv = a.value_iv, value_tag = a.value_tag
       from catalog.variables a where a.project_id = $1 and b.project_id = $1 and a.name = 'USER' and b.name = 'PASSWORD'`,
      [broken.project.projectId],
    );
    const bad = await startLogins(broken, 1);
    await executorTakingAll();

    expect(await finished(good)).to.include({ status: RunStatus.PASSED, passedTests: 2 });
    expect(await finished(bad)).to.include({ status: RunStatus.FAILED });
    const { test } = await stack.runs.getTestResult({
      actor: bad.project.key,
      projectId: bad.project.projectId,
      runId: bad.runId,
      testResultId: bad.testIds[0] ?? "",
    });
    expect(test).to.include({
      status: TestStatus.FAILED,
      summary: "could not read the project's variables (internal)",
    });
    // The good tests' values were read one test at a time, each with its audit line.
    const lines = auditLinesOf(good.testIds);
    expect(lines.map((line) => line.test_result_id).sort()).to.deep.equal([...good.testIds].sort());
  });
});
