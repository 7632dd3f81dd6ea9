// Failure groups and run comparisons through the REST API, the whole system executing for real
// (issue 41): twelve test cases failing on one missing page form one group of twelve occurrences,
// and a run where one more test breaks shows exactly one newly failing test against its base.
import { createCliContext, importContent, readCaseFile } from "@testrun/cli";
import { expect } from "chai";
import type { System } from "../scripts/system.js";
import { addCases, newProject, type Pipeline, type RunBody, sharedTestSystem } from "./pipeline.js";

interface Group {
  id: string;
  occurrences: number;
  casesAffected: number;
  state: string;
  action: string;
  target: string;
  cause: string;
  firstSeen: { runId: string } | null;
}

/** A case of one GET step expecting `status` from `path` of the demo target. */
const caseYaml = (name: string, path: string, status: number) =>
  `- name: ${name}\n  tags: [groups]\n  steps:\n    - name: open it\n      http: { method: GET, path: "${path}" }\n      expect: { status: ${status} }\n`;

const missing = "/no-such-page";
const broken = Array.from({ length: 12 }, (_, i) => `missing page ${i + 1}`);

describe("failure groups and run comparisons through the REST API", () => {
  let system: System;
  let projectId: string;
  let pipeline: Pipeline;
  let other: Pipeline;
  let first: RunBody;
  let second: RunBody;
  let groupId: string;
  let extraCaseId: string;
  /** The project's groups right after the first run. */
  let afterFirst: { failureGroups: Group[]; nextCursor: string | null };

  const run = async (caseIds: string[]) => {
    const started = await pipeline.start({ testCaseIds: caseIds, name: "failure groups" });
    return pipeline.finished(started.id);
  };
  const get = async (path: string, as = pipeline) => {
    const answer = await as.call("GET", path);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    return answer.body;
  };

  before(async () => {
    system = await sharedTestSystem();
    const project = await newProject(system, "failure groups", { credits: 100 });
    projectId = project.projectId;
    pipeline = project.pipeline;
    other = (await newProject(system, "failure groups other", { credits: 10 })).pipeline;
    const yaml = [...broken.map((name) => caseYaml(name, missing, 200)), caseYaml("health", "/health", 200)];
    const created = await addCases(system, projectId, yaml.join(""));
    const ids = created.map((c) => c.id);
    extraCaseId = ids[12] ?? "";
    first = await run(ids);
    afterFirst = (await get("/v1/failure-groups")) as typeof afterFirst;
    // The health case breaks: a new version that expects what the page does not answer.
    await importContent(createCliContext(system.env), {
      projectId,
      document: readCaseFile(caseYaml("health", "/health", 201), "cases.yaml"),
    });
    second = await run(ids);
  });

  it("groups twelve tests failing on one missing page into one group of twelve occurrences", async () => {
    expect([first.status, first.failedTests, first.passedTests]).to.deep.equal(["FAILED", 12, 1]);
    const failed = first.tests.filter((t) => t.status === "FAILED") as unknown as {
      failureGroup: { id: string } | null;
    }[];
    const ids = new Set(failed.map((t) => t.failureGroup?.id));
    expect(ids.size).to.equal(1);
    groupId = [...ids][0] ?? "";
    expect(groupId).to.match(/^fg_[0-9a-hjkmnp-tv-z]{26}$/);

    const { failureGroups, nextCursor } = afterFirst;
    const group = failureGroups.find((g) => g.id === groupId);
    expect(group).to.include({ occurrences: 12, casesAffected: 12, state: "open", action: "GET" });
    expect(group?.target).to.equal(missing);
    expect(group?.cause).to.equal("assertion");
    expect(group?.firstSeen?.runId).to.equal(first.id);
    expect(nextCursor).to.equal(null);
    // The second run's twelve failed the same way: the same group, counted again.
    const now = (await get("/v1/failure-groups")) as typeof afterFirst;
    expect(now.failureGroups.find((g) => g.id === groupId)).to.include({
      occurrences: 24,
      casesAffected: 12,
    });
  });

  it("pages a group's occurrences with limit and cursor and lists its cases", async () => {
    const page = (await get(`/v1/failure-groups/${groupId}?limit=5`)) as {
      failureGroup: Group;
      occurrences: { testResultId: string; runId: string; at: string }[];
      nextCursor: string | null;
      cases: { name: string; open: boolean }[];
    };
    expect(page.failureGroup.id).to.equal(groupId);
    expect(page.occurrences).to.have.length(5);
    expect(page.cases.map((c) => c.name).sort()).to.deep.equal([...broken].sort());
    expect(page.cases.every((c) => c.open)).to.equal(true);
    const seen = new Set(page.occurrences.map((o) => o.testResultId));
    let cursor = page.nextCursor;
    while (cursor) {
      const next = (await get(
        `/v1/failure-groups/${groupId}?limit=5&cursor=${encodeURIComponent(cursor)}`,
      )) as typeof page;
      for (const o of next.occurrences) seen.add(o.testResultId);
      cursor = next.nextCursor;
    }
    // Both runs' twelve failures, each once.
    expect(seen.size).to.equal(24);
  });

  it("shows exactly one newly failing test against the base run, with its steps' change", async () => {
    expect([second.failedTests, (second as unknown as { newFailures: number }).newFailures]).to.deep.equal([
      13, 1,
    ]);
    expect((second as unknown as { baseRunId: string }).baseRunId).to.equal(first.id);
    const comparison = (await get(`/v1/runs/${second.id}/comparison`)) as {
      base: { id: string } | null;
      baseRule: string;
      counts: Record<string, number>;
      tests: {
        testCaseId: string;
        change: string;
        status: string;
        baseStatus: string;
        stepChanges: { number: number; change: string; before: unknown; after: unknown }[];
        failureGroupId: string | null;
      }[];
      compareUrl: string;
    };
    expect([comparison.base?.id, comparison.baseRule]).to.deep.equal([first.id, "previous"]);
    expect(comparison.counts).to.include({ newlyFailing: 1, stillFailing: 12, fixed: 0 });
    const [newly] = comparison.tests;
    expect(newly).to.include({ testCaseId: extraCaseId, change: "newly_failing", status: "FAILED" });
    expect(newly?.baseStatus).to.equal("PASSED");
    expect(newly?.stepChanges).to.have.length(1);
    const step = newly?.stepChanges[0];
    expect(step?.change).to.equal("changed");
    // Parsed step objects, not strings: a client reads the expectation that changed.
    expect(JSON.stringify(step?.before)).to.contain("200");
    expect(JSON.stringify(step?.after)).to.contain("201");
    expect(typeof step?.after).to.equal("object");
    expect(comparison.tests.filter((t) => t.change === "still_failing")).to.have.length(12);
    expect(comparison.compareUrl).to.equal(`${second.url}/compare`);

    const named = (await get(`/v1/runs/${second.id}/comparison?base=${first.id}`)) as typeof comparison;
    expect(named.baseRule).to.equal("named");
    const none = (await get(`/v1/runs/${first.id}/comparison`)) as typeof comparison;
    expect([none.baseRule, none.base]).to.deep.equal(["none", null]);
  });

  it("refuses bounds and unknown values with a clear 400", async () => {
    const cases: [string, RegExp][] = [
      ["/v1/failure-groups?limit=0", /limit must be a whole number from 1 to 100/],
      ["/v1/failure-groups?limit=101", /limit must be a whole number from 1 to 100/],
      ["/v1/failure-groups?limit=ten", /limit must be a whole number from 1 to 100/],
      ["/v1/failure-groups?state=closed", /state must be open, resolved or reopened/],
      ["/v1/failure-groups?states=open", /unknown query parameter "states"/],
      ["/v1/failure-groups?cursor=not-a-cursor", /cursor/],
      [`/v1/failure-groups/${groupId}?limit=101`, /limit must be a whole number from 1 to 100/],
      [`/v1/runs/${second.id}/comparison?base=yesterday`, /base must be a run id/],
    ];
    for (const [path, message] of cases) {
      const { status, body } = await pipeline.call("GET", path);
      expect([path, status, body.code]).to.deep.equal([path, 400, "invalid_request"]);
      expect(String(body.error)).to.match(message);
    }
    const resolved = (await get("/v1/failure-groups?state=resolved&state=reopened")) as {
      failureGroups: Group[];
    };
    expect(resolved.failureGroups.map((g) => g.id)).not.to.include(groupId);
  });

  it("answers 404 to another project's key", async () => {
    for (const path of [
      `/v1/failure-groups/${groupId}`,
      `/v1/runs/${second.id}/comparison`,
      "/v1/failure-groups/fg_01m80000000000000000000000",
      "/v1/failure-groups/not-a-group",
    ]) {
      const { status, body } = await other.call("GET", path);
      expect([path, status, body.code]).to.deep.equal([path, 404, "not_found"]);
    }
    expect((await get("/v1/failure-groups", other)).failureGroups).to.deep.equal([]);
    // A base that is not a run of the key's project is not found either.
    const unknownBase = await pipeline.call(
      "GET",
      `/v1/runs/${second.id}/comparison?base=run_01m80000000000000000000000`,
    );
    expect(unknownBase.status).to.equal(404);
  });
});
