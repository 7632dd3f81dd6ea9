// GetVariableValuesBatch: the variable values of a ClaimTests batch's tests in one call, against
// the real catalog (in-process, its PostgreSQL and its log).
import { randomBytes } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { VariablesGrants } from "@testrun/kit";
import {
  type InProcessCatalog,
  newProject,
  operator,
  rejects,
  seedOrganization,
  startInProcessCatalog,
} from "@testrun/testing";
import { expect } from "chai";

/** Values unlike anything else in the suite, so finding one anywhere is a leak. */
const secret = (label: string) => `${label}-${randomBytes(12).toString("hex")}`;
const testId = () => `tr_${randomBytes(13).toString("hex")}`;

/** The catalog's audit line of a read, as its JSON log writes it. */
interface AuditLine {
  level: string;
  msg: string;
  tests?: number;
  projects?: { project_id: string; variables: number; test_result_ids: string[] }[];
  test_result_id?: string;
}

describe("catalog: variable values in batches", () => {
  let h: InProcessCatalog;
  let grants: VariablesGrants;
  /** Every value this suite sent; none may appear in the log. */
  const used: string[] = [];
  let projectA: string;
  let projectB: string;
  /** A project without variables. */
  let projectC: string;
  const valuesA: Record<string, string> = {};
  const valuesB: Record<string, string> = {};

  /** A test of `projectId` with the grant the runs service issues with its claim. */
  const entry = (projectId: string, testResultId = testId(), validForMs = 60_000) => ({
    projectId,
    testResultId,
    grant: grants.issue({ projectId, testResultId }, validForMs),
  });
  const auditLines = (): AuditLine[] =>
    h
      .lines()
      .map((line) => JSON.parse(line) as AuditLine)
      .filter((line) => line.msg === "executor read variable values");
  /**
   * Every line the calls so far logged: a last per-test read whose audit line marks the end (the
   * log is one ordered stream, so once it arrived, so did every line written before it).
   */
  async function settledLog(): Promise<void> {
    const marker = entry(projectA);
    await h.executor.getVariableValues(marker);
    await h.logLine((line) => line.includes(marker.testResultId));
  }

  before(async () => {
    // At debug: every line the catalog can write, each call's "rpc ok" included.
    h = await startInProcessCatalog({ LOG_LEVEL: "debug", VARIABLE_READS_AUDIT_MS: "1000" });
    grants = new VariablesGrants(h.env.SERVICE_TOKEN ?? "");
    const one = await seedOrganization(h.catalog);
    const two = await seedOrganization(h.catalog);
    projectA = one.projectId;
    projectB = two.projectId;
    projectC = await newProject(h.catalog, two.orgId);
    const create = async (projectId: string, into: Record<string, string>, name: string) => {
      const value = secret(name);
      used.push(value);
      await h.catalog.createVariable({ actor: operator(), projectId, name, value });
      into[name] = value;
    };
    await create(projectA, valuesA, "PASSWORD");
    await create(projectA, valuesA, "TOKEN");
    await create(projectB, valuesB, "PASSWORD");
  });
  after(async () => {
    await h.stop();
  });

  it("answers each project's values once for the tests of several projects, with one audit line", async () => {
    const tests = [
      entry(projectA),
      entry(projectB),
      entry(projectA),
      entry(projectC),
      entry(projectA),
      entry(projectB),
    ];
    const { projects } = await h.executor.getVariableValuesBatch({ tests });
    expect(Object.keys(projects).sort()).to.deep.equal([projectA, projectB, projectC].sort());
    expect(projects[projectA]?.values).to.deep.equal(valuesA);
    expect(projects[projectB]?.values).to.deep.equal(valuesB);
    expect(projects[projectC]?.values).to.deep.equal({});

    await settledLog();
    const ids = tests.map((test) => test.testResultId);
    const lines = h.lines().filter((line) => ids.some((id) => line.includes(id)));
    expect(lines, "lines naming the batch's tests").to.have.length(1);
    const [audit] = auditLines().filter((line) => line.tests !== undefined);
    // Per call at debug; at info only the summary (the test below).
    expect(audit?.level).to.equal("debug");
    expect(audit?.tests).to.equal(6);
    const testsOf = (projectId: string) =>
      tests.filter((test) => test.projectId === projectId).map((test) => test.testResultId);
    expect(audit?.projects).to.have.deep.members([
      { project_id: projectA, variables: 2, test_result_ids: testsOf(projectA) },
      { project_id: projectB, variables: 1, test_result_ids: testsOf(projectB) },
      { project_id: projectC, variables: 0, test_result_ids: testsOf(projectC) },
    ]);
  });

  it("sums executors' reads per project into one info line a period, naming no test and no value", async () => {
    const tests = [entry(projectA), entry(projectA), entry(projectB)];
    await h.executor.getVariableValuesBatch({ tests });
    await h.executor.getVariableValuesBatch({ tests: [entry(projectA)] });
    const line = await h.logLine((text) => {
      const parsed = JSON.parse(text) as { msg?: string; projects?: { project_id: string }[] };
      return (
        parsed.msg === "executors read variable values" &&
        (parsed.projects ?? []).some((p) => p.project_id === projectB)
      );
    });
    const summary = JSON.parse(line) as {
      level: string;
      projects: { project_id: string; calls: number; tests: number }[];
    };
    expect(summary.level).to.equal("info");
    const ofA = summary.projects.find((p) => p.project_id === projectA);
    expect(ofA?.tests).to.be.at.least(2);
    for (const test of tests) expect(line).to.not.contain(test.testResultId);
    for (const value of used) expect(line).to.not.contain(value);
  });

  it("refuses the whole call when one grant is forged, expired or another test's, without saying which", async () => {
    const other = entry(projectA);
    const forger = new VariablesGrants(randomBytes(32).toString("base64url"));
    const withGrant = (grant: (testResultId: string) => string) => {
      const testResultId = testId();
      return { projectId: projectB, testResultId, grant: grant(testResultId) };
    };
    const bad = {
      missing: withGrant(() => ""),
      expired: entry(projectB, testId(), -1),
      forged: withGrant(() => `${Date.now() + 60_000}.${"A".repeat(43)}`),
      "of another test": withGrant(() => other.grant),
      "of another project": withGrant((id) =>
        grants.issue({ projectId: projectA, testResultId: id }, 60_000),
      ),
      "made with another key": withGrant((id) =>
        forger.issue({ projectId: projectB, testResultId: id }, 60_000),
      ),
    };
    for (const [why, test] of Object.entries(bad)) {
      const tests = [entry(projectA), test, entry(projectB)];
      const refused = await rejects(h.executor.getVariableValuesBatch({ tests }), Code.PermissionDenied);
      expect(refused.rawMessage, why).to.equal(
        "a grant to read variable values is missing, expired or not for its project and test",
      );
      expect(refused.details, why).to.have.length(0);
      // What the executor does next: each test alone; the good ones are answered.
      expect((await h.executor.getVariableValues(tests[0] as (typeof tests)[0])).values).to.deep.equal(
        valuesA,
      );
      await rejects(h.executor.getVariableValues(test), Code.PermissionDenied);
    }
    // Nothing was read for the refused calls: no audit line of a batch but the first test's.
    await settledLog();
    const badIds = Object.values(bad).map((test) => test.testResultId);
    expect(
      auditLines().filter((line) => badIds.some((id) => JSON.stringify(line).includes(id))),
    ).to.deep.equal([]);
  });

  it("takes 1 to 100 tests, each once with its test id, from the executor only", async () => {
    const hundred = Array.from({ length: 100 }, () => entry(projectA));
    const { projects } = await h.executor.getVariableValuesBatch({ tests: hundred });
    expect(Object.keys(projects)).to.deep.equal([projectA]);
    expect(
      (
        await rejects(
          h.executor.getVariableValuesBatch({ tests: [...hundred, entry(projectA)] }),
          Code.InvalidArgument,
        )
      ).rawMessage,
    ).to.equal("tests must hold 1 to 100 entries (got 101)");
    expect(
      (await rejects(h.executor.getVariableValuesBatch({ tests: [] }), Code.InvalidArgument)).rawMessage,
    ).to.equal("tests must hold 1 to 100 entries (got 0)");
    const twice = entry(projectA);
    expect(
      (
        await rejects(
          h.executor.getVariableValuesBatch({ tests: [twice, entry(projectB), twice] }),
          Code.InvalidArgument,
        )
      ).rawMessage,
    ).to.equal("tests[2] names a test given before");
    expect(
      (
        await rejects(
          h.executor.getVariableValuesBatch({
            tests: [entry(projectA), { ...entry(projectA), testResultId: "" }],
          }),
          Code.InvalidArgument,
        )
      ).rawMessage,
    ).to.equal("tests[1].test_result_id is required");
    // A project gone since the claim: NOT_FOUND naming it.
    expect(
      (
        await rejects(
          h.executor.getVariableValuesBatch({ tests: [entry(projectA), entry("prj_gone")] }),
          Code.NotFound,
        )
      ).rawMessage,
    ).to.equal("project prj_gone not found");
    // The service token (the gateway, operators) reads no values, with valid grants or not.
    expect(
      (await rejects(h.catalog.getVariableValuesBatch({ tests: [entry(projectA)] }), Code.PermissionDenied))
        .rawMessage,
    ).to.equal("only executors may read variable values");
  });

  // Runs last: everything above sent values through the catalog.
  it("never writes a value to the catalog's log", async () => {
    await settledLog();
    const log = h.lines().join("\n");
    expect(log).to.contain("rpc ok");
    for (const value of used) expect(log).to.not.contain(value);
  });
});
