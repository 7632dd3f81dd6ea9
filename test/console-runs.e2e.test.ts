// The console's runs, content and credits as a browser calls them, over real HTTP to the whole
// system: starting and cancelling for the member, the live run stream, role rules kept in the
// services, write-only variables, and nothing secret in any log line.
import { Code } from "@connectrpc/connect";
import {
  addMember,
  createCliContext,
  createEnvironment,
  createTestPlan,
  readTestCaseFile,
  setVariable,
} from "@testrun/cli";
import { LedgerEntryKind } from "@testrun/gen/testrun/billing/v1/billing_pb";
import { Role } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { InsufficientCreditsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import type { RunDetails } from "@testrun/gen/testrun/console/v1/console_pb";
import { RunStatus, SkipReason, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { eventually } from "@testrun/testing";
import { expect } from "chai";
import type { System } from "../scripts/system.js";
import { consoleClient, refusal, signIn } from "./console-client.js";
import { HeldTarget, heldCase } from "./held-target.js";
import { addCases, getCase, newProject, startTestSystem, type TestProject } from "./pipeline.js";

const cases = [
  heldCase("Held one", "one", "/hold/one"),
  heldCase("Held a", "three", "/hold/a"),
  heldCase("Held b", "three", "/hold/b"),
  heldCase("Held c", "three", "/hold/c"),
  `- name: Token check
  tags: [token]
  steps:
    - name: send the token
      http: { method: GET, path: /token, headers: { x-token: "{{TOKEN}}" } }
`,
  `- name: Second step fails
  tags: [broken]
  steps:
    - name: fine
      http: { method: GET, path: /fine }
    - name: wants created
      http: { method: POST, path: /fine, json: { a: 1 } }
      expect: { status: [201] }
`,
].join("");

/** The window after which the console ends a live stream (short here, so a test can see it end). */
const watchWindowSeconds = 3;

describe("console runs (end to end)", function () {
  this.timeout(60_000);
  let system: System;
  let target: HeldTarget;
  let acme: TestProject;
  let owner: ReturnType<typeof consoleClient>;
  let organizationId: string;
  const secrets = ["first-token-value-7f3a", "second-token-value-91c2"];

  const projectId = () => acme.projectId;
  /** Starts a run in the console by tag, as the signed-in owner. */
  const startByTag = async (tag: string) =>
    (
      await owner.startRun({
        projectId: projectId(),
        selection: { selection: { case: "tags", value: { tags: [tag] } } },
      })
    ).run;

  /** Every message of a run's live stream until it ends, reopening it when its window closes, as the page does. */
  const watchToTheEnd = async (runId: string, onMessage: (run: RunDetails) => void = () => {}) => {
    const seen: RunDetails[] = [];
    while (!seen.at(-1)?.run?.finished) {
      for await (const { run } of owner.watchRun({ projectId: projectId(), runId })) {
        if (!run) continue;
        seen.push(run);
        onMessage(run);
      }
    }
    return seen;
  };

  before(async () => {
    system = await startTestSystem({
      serviceEnv: {
        // One test at a time: the tests of a held run beyond the first stay QUEUED.
        executor: { CONCURRENCY: "1" },
        console: { WATCH_WINDOW_SECONDS: String(watchWindowSeconds) },
        // Each call it serves logged ("rpc ok", at debug): which calls a console read made.
        catalog: { LOG_LEVEL: "debug" },
      },
    });
    target = await HeldTarget.start();
    acme = await newProject(system, "Acme runs", { credits: 100 });
    const ctx = createCliContext(system.env);
    await createEnvironment(ctx, {
      projectId: projectId(),
      name: "held",
      baseUrl: target.url,
      isDefault: true,
    });
    await addCases(system, projectId(), cases);
    await setVariable(ctx, { projectId: projectId(), name: "TOKEN", value: secrets[0] ?? "" });
    const cookie = await signIn(system, acme.ownerId);
    secrets.push(cookie);
    owner = consoleClient(system, cookie);
    organizationId = (await owner.getProject({ projectId: projectId() })).organization?.id ?? "";
  });

  after(async () => {
    await target?.stop();
    await system?.stop();
  });

  it("previews a run's cost and the balance, then starts it for the member; the REST API lists it", async () => {
    const preview = await owner.previewRun({
      projectId: projectId(),
      selection: { selection: { case: "tags", value: { tags: ["three"] } } },
    });
    expect(preview.testCount).to.equal(3);
    expect(preview.environment?.name).to.equal("held");
    expect(preview.defaultRunName).to.not.equal("");
    const { balance: before } = await owner.getCredits({ projectId: projectId() });
    expect(preview.balance).to.equal(before);

    const run = await startByTag("token");
    expect(run?.status).to.equal(RunStatus.RUNNING);
    const listed = await acme.pipeline.call("GET", "/v1/runs");
    expect((listed.body.runs as { id: string }[]).map((r) => r.id)).to.include(run?.id);
    await acme.pipeline.finished(run?.id ?? "");

    const { run: details } = await owner.getRun({ projectId: projectId(), runId: run?.id ?? "" });
    expect(details?.run?.status).to.equal(RunStatus.PASSED);
    expect(details?.startedByMemberName).to.equal("Owner");
    expect(details?.startedByKeyName).to.equal("");
    expect(details?.environmentName).to.equal("held");
    expect((await owner.getCredits({ projectId: projectId() })).balance).to.equal(before - 1n);
  });

  it("refuses a start the balance cannot pay (with required and available) or of more than 500 tests, and starts nothing", async () => {
    const poor = await newProject(system, "Poor runs", { credits: 2 });
    await addCases(system, poor.projectId, cases);
    const client = consoleClient(system, await signIn(system, poor.ownerId));
    const selection = { selection: { case: "tags" as const, value: { tags: ["three"] } } };

    const preview = await client.previewRun({ projectId: poor.projectId, selection });
    expect([preview.testCount, preview.balance]).to.deep.equal([3, 2n]);
    const error = await refusal(client.startRun({ projectId: poor.projectId, selection }));
    expect(error.code).to.equal(Code.FailedPrecondition);
    const [short] = error.findDetails(InsufficientCreditsSchema);
    expect([short?.required, short?.available]).to.deep.equal([3n, 2n]);
    expect((await client.listRuns({ projectId: poor.projectId })).runs).to.deep.equal([]);
    expect((await client.getCredits({ projectId: poor.projectId })).balance).to.equal(2n);

    // A run holds at most 500 tests: the preview and the start say so, and nothing starts.
    const ids = Array.from({ length: 501 }, (_, i) => `tc_${String(i).padStart(26, "0")}`);
    const tooMany = { selection: { case: "testCaseIds" as const, value: { ids } } };
    for (const call of [
      client.previewRun({ projectId: poor.projectId, selection: tooMany }),
      client.startRun({ projectId: poor.projectId, selection: tooMany }),
    ]) {
      const refused = await refusal(call);
      expect(refused.code).to.equal(Code.InvalidArgument);
      expect(refused.rawMessage).to.match(/at most 500/);
    }
    expect((await client.listRuns({ projectId: poor.projectId })).runs).to.deep.equal([]);
  });

  it("names a run of chosen test cases after the first chosen; the REST API keeps 'N test cases'", async () => {
    const { testCases } = await owner.listTestCases({ projectId: projectId() });
    const idOf = (name: string) => testCases.find((c) => c.name === name)?.id ?? "";
    // The newer case first: the name follows the choice, not the cases' age.
    const ids = [idOf("Second step fails"), idOf("Token check")];
    const selection = { selection: { case: "testCaseIds" as const, value: { ids } } };

    const preview = await owner.previewRun({ projectId: projectId(), selection });
    expect(preview.defaultRunName).to.equal("Second step fails + 1 more");
    const { run } = await owner.startRun({ projectId: projectId(), selection });
    expect(run?.name).to.equal("Second step fails + 1 more");
    const one = await owner.startRun({
      projectId: projectId(),
      selection: { selection: { case: "testCaseIds", value: { ids: [idOf("Token check")] } } },
    });
    expect(one.run?.name).to.equal("Token check");
    const named = await owner.startRun({ projectId: projectId(), selection, name: "checkout smoke" });
    expect(named.run?.name).to.equal("checkout smoke");

    const viaRest = await acme.pipeline.start({ testCaseIds: ids });
    expect(viaRest.name).to.equal("2 test cases");
    for (const id of [run?.id, one.run?.id, named.run?.id, viaRest.id])
      await acme.pipeline.finished(id ?? "");
  });

  it("streams a run live: at once, on every change, ending with the finished run", async () => {
    const release = target.hold("/hold/one");
    // Started by the pipeline's key: the page names the key and its creator.
    const started = await acme.pipeline.start({ tags: ["one"] });
    let released = false;
    const seen = await watchToTheEnd(started.id, (run) => {
      if (!released && run.run?.tests[0]?.status === TestStatus.RUNNING) {
        released = true;
        release();
      }
    });
    expect(seen[0]?.run?.finished).to.equal(false);
    expect(seen.map((m) => m.run?.tests[0]?.status)).to.include(TestStatus.RUNNING);
    const last = seen.at(-1);
    expect(last?.run?.status).to.equal(RunStatus.PASSED);
    expect(last?.startedByKeyName).to.equal("pipeline");
    expect(last?.startedByMemberName).to.equal("Owner");
    // Each message is news: no state is sent twice in a row within a stream.
    const states = seen.map(
      (m) => JSON.stringify(m.run?.tests.map((t) => [t.status, t.attempt])) + m.run?.status,
    );
    for (let i = 1; i < states.length; i++)
      if (states[i] === states[i - 1]) expect(seen[i]?.run?.finished).to.equal(true);
  });

  it("ends a stream cleanly when its window closes while the run goes on", async () => {
    const release = target.hold("/hold/one");
    try {
      const started = await acme.pipeline.start({ tags: ["one"] });
      await acme.pipeline.running(started.id);
      const messages: RunDetails[] = [];
      for await (const { run } of owner.watchRun({ projectId: projectId(), runId: started.id }))
        if (run) messages.push(run);
      // The loop ended without an error: the browser simply calls again.
      expect(messages.length).to.be.greaterThan(0);
      expect(messages.at(-1)?.run?.finished).to.equal(false);
    } finally {
      release();
    }
  });

  it("cancels a run: what is not final is skipped, the tests no executor started are refunded", async () => {
    const releases = ["/hold/a", "/hold/b", "/hold/c"].map((path) => target.hold(path));
    try {
      const { balance: before } = await owner.getCredits({ projectId: projectId() });
      const run = await startByTag("three");
      await acme.pipeline.running(run?.id ?? "");
      const queued = (
        await owner.getRun({ projectId: projectId(), runId: run?.id ?? "" })
      ).run?.run?.tests.filter((t) => t.status === TestStatus.QUEUED).length;
      expect(queued).to.equal(2);

      const { run: cancelled } = await owner.cancelRun({ projectId: projectId(), runId: run?.id ?? "" });
      expect(cancelled?.status).to.equal(RunStatus.SKIPPED);
      expect(cancelled?.skipReason).to.equal(SkipReason.CANCELLED);
      expect(cancelled?.tests.every((t) => t.status === TestStatus.SKIPPED)).to.equal(true);

      const credits = await owner.getCredits({ projectId: projectId() });
      const refund = credits.entries.find((e) => e.runId === run?.id && e.kind === LedgerEntryKind.REFUND);
      expect(refund?.amount).to.equal(2n);
      expect(refund?.reason).to.equal("cancelled");
      expect(credits.balance).to.equal(before - 3n + 2n);
    } finally {
      for (const release of releases) release();
    }
  });

  it("shows a failed test's steps as they ran and which step failed", async () => {
    const run = await startByTag("broken");
    await acme.pipeline.finished(run?.id ?? "");
    const testResultId = run?.tests[0]?.id ?? "";
    const found = await owner.getTestResult({ projectId: projectId(), runId: run?.id ?? "", testResultId });
    expect(found.test?.status).to.equal(TestStatus.FAILED);
    expect(found.test?.failedStep).to.equal(2);
    expect(found.test?.summary).to.match(/^step 2 "wants created": /);
    expect(found.steps.map((s) => s.name)).to.deep.equal(["fine", "wants created"]);
    expect(found.steps[1]?.kind.case === "http" && found.steps[1].kind.value.request?.method).to.equal(
      "POST",
    );
    expect(found.run?.run?.id).to.equal(run?.id);
    expect(found.maxAttempts).to.be.greaterThan(0);

    const unknown = await refusal(
      owner.getTestResult({ projectId: projectId(), runId: run?.id ?? "", testResultId: "tr_unknown" }),
    );
    expect(unknown.code).to.equal(Code.NotFound);
  });

  it("lists runs newest first, a page at a time, filtered by status", async () => {
    const first = await owner.listRuns({ projectId: projectId(), pageSize: 2 });
    expect(first.runs).to.have.length(2);
    expect(first.nextPageToken).to.not.equal("");
    const second = await owner.listRuns({
      projectId: projectId(),
      pageSize: 2,
      pageToken: first.nextPageToken,
    });
    const ids = [...first.runs, ...second.runs].map((r) => r.id);
    expect(new Set(ids).size).to.equal(ids.length);
    const created = [...first.runs, ...second.runs].map((r) => r.createdAt?.seconds ?? 0n);
    expect([...created].sort((a, b) => Number(b - a))).to.deep.equal(created);

    const failed = await owner.listRuns({ projectId: projectId(), statuses: [RunStatus.FAILED] });
    expect(failed.runs.length).to.be.greaterThan(0);
    expect(failed.runs.every((r) => r.status === RunStatus.FAILED)).to.equal(true);
  });

  it("sets a variable's value write-only: the next run uses it, no answer shows it", async () => {
    const [variable] = (await owner.listVariables({ projectId: projectId() })).variables;
    expect(variable?.name).to.equal("TOKEN");
    const set = await owner.setVariableValue({
      projectId: projectId(),
      variableId: variable?.id ?? "",
      value: secrets[1] ?? "",
    });
    expect(JSON.stringify(set.variable, (_k, v) => (typeof v === "bigint" ? String(v) : v))).to.not.contain(
      secrets[1],
    );
    const run = await startByTag("token");
    expect((await acme.pipeline.finished(run?.id ?? "")).status).to.equal("PASSED");
    expect(target.received.filter((r) => r.path === "/token").at(-1)?.headers["x-token"]).to.equal(
      secrets[1],
    );
  });

  it("shows plans with their cases in order, a case with its plans, and the default environment", async () => {
    const ctx = createCliContext(system.env);
    const plan = await createTestPlan(ctx, {
      projectId: projectId(),
      name: "Held plan",
      testCases: ["Held c", "Held a"],
    });
    const shown = await owner.getTestPlan({ projectId: projectId(), testPlanId: plan.id });
    expect(shown.testCases.map((c) => c.name)).to.deep.equal(["Held c", "Held a"]);
    const caseId = shown.testCases[0]?.id ?? "";
    const testCase = await owner.getTestCase({ projectId: projectId(), testCaseId: caseId });
    expect(testCase.testCase?.steps).to.have.length(1);
    expect(testCase.testPlans.map((p) => p.name)).to.deep.equal(["Held plan"]);
    const { environments } = await owner.listEnvironments({ projectId: projectId() });
    expect(environments.filter((e) => e.isDefault).map((e) => e.name)).to.deep.equal(["held"]);
    const { testCases } = await owner.listTestCases({ projectId: projectId(), tags: ["three"] });
    expect(testCases.map((c) => c.name)).to.deep.equal(["Held a", "Held b", "Held c"]);
  });

  it("shows a plan whose cases lie beyond the list's first 500 whole, read from the catalog in one call", async () => {
    const big = await newProject(system, "Big plan", { credits: 0 });
    const ctx = createCliContext(system.env);
    const [bulk] = readTestCaseFile(getCase("bulk", "bulk", "/bulk"), "bulk.yaml");
    // The first 500 (the list's page) in parallel batches, then three created after them.
    for (let start = 0; start < 500; start += 50)
      await Promise.all(
        Array.from({ length: 50 }, (_, k) =>
          ctx.catalog.createTestCase({
            actor: ctx.actor,
            projectId: big.projectId,
            name: `bulk ${start + k}`,
            steps: bulk?.steps ?? [],
          }),
        ),
      );
    await addCases(
      system,
      big.projectId,
      ["late 0", "late 1", "late 2"].map((n) => getCase(n, "late", "/late")).join(""),
    );
    const plan = await createTestPlan(ctx, {
      projectId: big.projectId,
      name: "Beyond the page",
      testCases: ["late 2", "bulk 7", "late 0"],
    });
    const catalog = system.processes.get("catalog");
    const from = catalog?.output().length ?? 0;
    const client = consoleClient(system, await signIn(system, big.ownerId));
    const shown = await client.getTestPlan({ projectId: big.projectId, testPlanId: plan.id });
    expect(shown.testCases.map((c) => c.name)).to.deep.equal(["late 2", "bulk 7", "late 0"]);
    // A call made after the answer: its log line follows every line of the plan's reads.
    await client.listEnvironments({ projectId: big.projectId });
    const rpcs = await eventually(async () => {
      const lines = (catalog?.output() ?? []).slice(from).map((l) => String(JSON.parse(l).rpc ?? ""));
      const marker = lines.findIndex((rpc) => rpc.endsWith("/ListEnvironments"));
      return marker < 0 ? undefined : lines.slice(0, marker);
    }, "the catalog's log line of ListEnvironments");
    const caseReads = rpcs.filter((rpc) => /\/(GetTestCase|ListTestCases)$/.test(rpc));
    expect(caseReads).to.deep.equal(["testrun.catalog.v1.CatalogService/ListTestCases"]);
  });

  it("lets a Viewer look but not start, cancel, preview or set a value", async () => {
    const viewer = await addMember(createCliContext(system.env), {
      organizationId,
      email: "viewer@acme-runs.example",
      displayName: "Vera Viewer",
      role: Role.VIEWER,
    });
    const client = consoleClient(system, await signIn(system, viewer.id));
    const [latest] = (await client.listRuns({ projectId: projectId() })).runs;
    expect((await client.getRun({ projectId: projectId(), runId: latest?.id ?? "" })).run?.run?.id).to.equal(
      latest?.id,
    );
    expect((await client.listVariables({ projectId: projectId() })).variables).to.have.length(1);
    expect((await client.getCredits({ projectId: projectId() })).entries.length).to.be.greaterThan(0);

    const selection = { selection: { case: "tags" as const, value: { tags: ["token"] } } };
    const refusals = await Promise.all([
      refusal(client.startRun({ projectId: projectId(), selection })),
      refusal(client.previewRun({ projectId: projectId(), selection })),
      refusal(client.cancelRun({ projectId: projectId(), runId: latest?.id ?? "" })),
      refusal(client.setVariableValue({ projectId: projectId(), variableId: "var_x", value: "nope" })),
    ]);
    expect(refusals.map((e) => Code[e.code])).to.deep.equal(Array(4).fill("PermissionDenied"));
  });

  it("answers another organization's run exactly like an unknown project", async () => {
    const other = await newProject(system, "Other runs", { credits: 0 });
    const stranger = consoleClient(system, await signIn(system, other.ownerId));
    const [latest] = (await owner.listRuns({ projectId: projectId() })).runs;
    const runId = latest?.id ?? "";
    const theirs = await refusal(stranger.getRun({ projectId: projectId(), runId }));
    const unknown = await refusal(stranger.getRun({ projectId: "prj_unknown", runId }));
    expect([theirs.code, theirs.rawMessage]).to.deep.equal([unknown.code, unknown.rawMessage]);
    expect(theirs.code).to.equal(Code.NotFound);
    const watched = await refusal(
      (async () => {
        for await (const _ of stranger.watchRun({ projectId: projectId(), runId })) break;
      })(),
    );
    expect([watched.code, watched.rawMessage]).to.deep.equal([unknown.code, unknown.rawMessage]);
  });

  it("writes no variable value or session cookie to any log line", () => {
    for (const [name, child] of system.processes) {
      const output = child.output().join("\n");
      for (const secret of secrets)
        expect(output.includes(secret), `${name} logged a secret`).to.equal(false);
    }
  });
});
