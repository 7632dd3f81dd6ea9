// A Playwright spec test's step results (runs.proto StepResult.name/error, CompleteTest's bound of
// 200 for a spec test): one per `test()`, named, the failed one with its error, results past a
// FAILED one and SKIPPED ones kept; a steps test keeps its rules.
import { Code } from "@connectrpc/connect";
import { ArtifactKind, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  type InProcessRunsStack,
  leaseOf,
  operator,
  type RunsProject,
  rejects,
  seedRunsProject,
  startInProcessRunsStack,
} from "@testrun/testing";
import { expect } from "chai";

const source = `import { test, expect } from "@playwright/test";
test("home", async ({ page }) => { await page.goto("/"); });
`;

describe("runs: a Playwright spec test's step results carry each test()'s name and error", () => {
  let stack: InProcessRunsStack;
  let project: RunsProject;
  let specCase: string;

  before(async () => {
    stack = await startInProcessRunsStack({}, 8);
    project = await seedRunsProject(stack);
    const { testCase } = await stack.catalog.catalog.createTestCase({
      actor: operator(),
      projectId: project.projectId,
      name: "shop",
      playwright: { spec: { path: "tests/shop.spec.ts", source } },
    });
    specCase = testCase?.id ?? "";
  });
  after(async () => {
    await stack?.stop();
  });

  const claimSpecAndSteps = async () => {
    const { run } = await stack.runs.startRun({
      actor: project.key,
      projectId: project.projectId,
      selection: { case: "testCaseIds", value: { ids: [specCase, project.cases[0] ?? ""] } },
    });
    const idOf = (name: string) => run?.tests.find((test) => test.name === name)?.id ?? "";
    const { outcomes } = await stack.executor.claimTests({
      claims: [
        { testResultId: idOf("shop"), executorId: "browser-pod/0" },
        { testResultId: idOf("login"), executorId: "browser-pod/1" },
      ],
    });
    const [spec, steps] = outcomes.map((outcome) => outcome.assignment);
    return { runId: run?.id ?? "", spec, steps };
  };

  it("stores three named results, the failed one's error, one after it and a trace at test 3", async () => {
    const { runId, spec, steps } = await claimSpecAndSteps();
    // The spec test ends first (the run's other test still open), with an artifact at test 3:
    // past its zero snapshotted steps, within the spec's bound.
    const trace = await stack.executor.putArtifact({
      ...leaseOf(spec),
      kind: ArtifactKind.TRACE,
      name: "trace",
      contentType: "application/zip",
      content: new Uint8Array(100),
      step: 3,
    });
    expect(trace.artifact?.step).to.equal(3);
    await stack.executor.completeTest({
      ...leaseOf(spec),
      status: TestStatus.FAILED,
      summary: 'test 2 "adds to cart" failed: expected 2, got 1',
      durationMs: 900n,
      failedStep: 2,
      stepResults: [
        { number: 1, status: TestStatus.PASSED, durationMs: 300n, name: "opens the shop" },
        {
          number: 2,
          status: TestStatus.FAILED,
          durationMs: 400n,
          name: "adds to cart",
          error: "expected 2, got 1",
        },
        { number: 3, status: TestStatus.SKIPPED, durationMs: 0n, name: "pays later" },
        { number: 4, status: TestStatus.PASSED, durationMs: 200n, name: "logs out" },
      ],
    });
    // The steps test (the run's last, by the fast path's fallback) still ends at its failure.
    await stack.executor.completeTest({
      ...leaseOf(steps),
      status: TestStatus.PASSED,
      durationMs: 10n,
      stepResults: [{ number: 1, status: TestStatus.PASSED, durationMs: 10n }],
    });
    const read = await stack.runs.getRun({ actor: project.key, projectId: project.projectId, runId });
    const shown = read.run?.tests.find((test) => test.name === "shop");
    expect(shown?.stepResults.map((s) => [s.number, s.status, s.name, s.error])).to.deep.equal([
      [1, TestStatus.PASSED, "opens the shop", ""],
      [2, TestStatus.FAILED, "adds to cart", "expected 2, got 1"],
      [3, TestStatus.SKIPPED, "pays later", ""],
      [4, TestStatus.PASSED, "logs out", ""],
    ]);
    expect(shown?.failedStep).to.equal(2);
    expect(shown?.artifacts.map((a) => [a.kind, a.step])).to.deep.equal([[ArtifactKind.TRACE, 3]]);
    const login = read.run?.tests.find((test) => test.name === "login");
    expect(login?.stepResults.map((s) => [s.name, s.error])).to.deep.equal([["", ""]]);
  });

  it("refuses a name or error past 300 characters or of two lines, more than 200 results, and a steps test's results past its steps", async () => {
    const { spec, steps } = await claimSpecAndSteps();
    const complete = (stepResults: Parameters<typeof stack.executor.completeTest>[0]["stepResults"]) =>
      stack.executor.completeTest({
        ...leaseOf(spec),
        status: TestStatus.PASSED,
        durationMs: 1n,
        stepResults,
      });
    const named = (number: number) => ({
      number,
      status: TestStatus.PASSED,
      durationMs: 1n,
      name: `t${number}`,
    });
    const long = await rejects(complete([{ ...named(1), name: "n".repeat(301) }]), Code.InvalidArgument);
    expect(long.rawMessage).to.equal("step_results[0].name must be at most 300 characters");
    const twoLines = await rejects(
      complete([{ ...named(1), status: TestStatus.FAILED, error: "a\nb" }]),
      Code.InvalidArgument,
    );
    expect(twoLines.rawMessage).to.equal("step_results[0].error must be one line");
    const many = await rejects(
      complete(Array.from({ length: 201 }, (_, i) => named(i + 1))),
      Code.InvalidArgument,
    );
    expect(many.rawMessage).to.equal("step_results must be at most 200 for a spec test");
    // 200 are taken.
    const done = await complete(Array.from({ length: 200 }, (_, i) => named(i + 1)));
    expect(done.test?.stepResults).to.have.length(200);
    expect(done.test?.stepResults[199]?.name).to.equal("t200");

    // A steps test: a named result does not lift its bound of one step.
    const past = await rejects(
      stack.executor.completeTest({
        ...leaseOf(steps),
        status: TestStatus.PASSED,
        durationMs: 1n,
        stepResults: [named(1), named(2)],
      }),
      Code.InvalidArgument,
    );
    expect(past.rawMessage).to.equal("step_results must number steps from 1 to 1, the number of steps");
    const skipped = await rejects(
      stack.executor.completeTest({
        ...leaseOf(steps),
        status: TestStatus.PASSED,
        durationMs: 1n,
        stepResults: [{ number: 1, status: TestStatus.SKIPPED, durationMs: 1n }],
      }),
      Code.InvalidArgument,
    );
    expect(skipped.rawMessage).to.equal("step_results[0].status must be PASSED or FAILED");
  });
});
