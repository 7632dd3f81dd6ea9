// A Playwright spec case in a run (catalog.proto SelectedTestCase.playwright, runs.proto
// TestAssignment.playwright): the run keeps the spec as it was when it started, publishes the test
// to the executors that run specs (their own stream), and hands the spec to the executor that claims it; the run's reads
// never carry its sources.

import type { TestKind } from "@testrun/kit";
import {
  type InProcessRunsStack,
  operator,
  type RunsProject,
  seedRunsProject,
  startInProcessRunsStack,
  streamDispatches,
} from "@testrun/testing";
import { expect } from "chai";

const source = `import { test, expect } from "@playwright/test";
test("home", async ({ page }) => { await page.goto("/"); await expect(page).toHaveTitle(/Shop/); });
`;

describe("runs: a Playwright spec case's test carries its spec to the executor", () => {
  let stack: InProcessRunsStack;
  let project: RunsProject;
  let specCase: string;

  before(async () => {
    stack = await startInProcessRunsStack({}, 8);
    project = await seedRunsProject(stack);
    const { testCase } = await stack.catalog.catalog.createTestCase({
      actor: operator(),
      projectId: project.projectId,
      name: "home page",
      playwright: {
        spec: { path: "tests/home.spec.ts", source },
        files: [{ path: "data/users.json", source: '{"name":"ann"}' }],
      },
    });
    specCase = testCase?.id ?? "";
  });
  after(async () => {
    await stack?.stop();
  });

  it("snapshots the spec at the start, publishes it to the spec stream and hands it over with the claim", async () => {
    const { run } = await stack.runs.startRun({
      actor: project.key,
      projectId: project.projectId,
      selection: { case: "testCaseIds", value: { ids: [specCase, project.cases[0] ?? ""] } },
    });
    const specTest = run?.tests.find((test) => test.name === "home page")?.id ?? "";
    const httpTest = run?.tests.find((test) => test.name === "login")?.id ?? "";
    const published = async (kind: TestKind) =>
      (await streamDispatches(stack.redis, kind)).map((dispatch) => dispatch?.testResultId);
    expect(await published("spec")).to.deep.equal([specTest]);
    expect(await published("browser")).to.not.include(specTest);
    expect(await published("http"))
      .to.include(httpTest)
      .and.not.include(specTest);

    // A later change of the case does not change what the run runs.
    await stack.catalog.catalog.updateTestCase({
      actor: operator(),
      projectId: project.projectId,
      testCaseId: specCase,
      playwright: { spec: { path: "tests/home.spec.ts", source: `${source}// changed\n` } },
    });

    const { outcomes } = await stack.executor.claimTests({
      claims: [
        { testResultId: specTest, executorId: "browser-pod/0" },
        { testResultId: httpTest, executorId: "browser-pod/1" },
      ],
    });
    const [spec, http] = outcomes.map((outcome) => outcome.assignment);
    expect(spec?.steps).to.deep.equal([]);
    expect(spec?.playwright?.spec).to.deep.include({ path: "tests/home.spec.ts", source });
    expect(spec?.playwright?.files.map((file) => [file.path, file.source])).to.deep.equal([
      ["data/users.json", '{"name":"ann"}'],
    ]);
    expect(http?.playwright).to.equal(undefined);
    expect(http?.steps).to.have.length(1);

    // ClaimTest (one at a time) hands it over the same way.
    const again = await stack.runs.startRun({
      actor: project.key,
      projectId: project.projectId,
      selection: { case: "testCaseIds", value: { ids: [specCase] } },
    });
    const one = await stack.executor.claimTest({
      testResultId: again.run?.tests[0]?.id ?? "",
      executorId: "browser-pod/2",
    });
    expect(one.assignment?.playwright?.spec?.source).to.equal(`${source}// changed\n`);
  });
});
