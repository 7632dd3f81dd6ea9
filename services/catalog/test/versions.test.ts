import { setTimeout } from "node:timers/promises";
import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { httpStepOf } from "@testrun/content-file";
import type { TestCase } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { type Actor, ActorSchema } from "@testrun/gen/testrun/common/v1/actor_pb";
import { EditConflictSchema, FieldViolationsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import { newId } from "@testrun/kit";
import {
  type Catalog,
  httpStep,
  type InProcessCatalog,
  member,
  rejects,
  runServiceCommand,
  seedOrganization,
  startInProcessCatalog,
  unique,
} from "@testrun/testing";
import { expect } from "chai";
import pg from "pg";

/** An operator actor with a name (the harness's operator() is named "test"). */
const operatorNamed = (name: string): Actor =>
  create(ActorSchema, { kind: { case: "operator", value: { name } } });

/** Resolves once `count` sessions of the test database wait for a lock (a row another holds). */
async function waitForLockWaiters(db: pg.Client, count: number): Promise<void> {
  // PostgreSQL tells nobody that a session started waiting; pg_stat_activity shows it, and each
  // round is a real query, not a timed guess.
  for (;;) {
    const { rows } = await db.query(
      "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()",
    );
    if (rows[0].n >= count) return;
    await setTimeout(10);
  }
}

/** The ABORTED error of a call and its EditConflict detail. */
async function conflictOf(call: Promise<unknown>) {
  const error = await rejects(call, Code.Aborted);
  const [detail] = error.findDetails(EditConflictSchema);
  expect(detail, "an EditConflict detail").to.not.equal(undefined);
  return { message: error.rawMessage, detail: detail as NonNullable<typeof detail> };
}

describe("catalog: versions of test cases and plans", () => {
  let h: InProcessCatalog;
  let catalog: Catalog;
  let seed: Awaited<ReturnType<typeof seedOrganization>>;
  let editor: Actor;
  let owner: Actor;
  let editorEmail: string;

  before(async () => {
    h = await startInProcessCatalog();
    catalog = h.catalog;
    seed = await seedOrganization(catalog);
    editor = member(seed.members.editor);
    owner = member(seed.members.owner);
    editorEmail = (await catalog.getMember({ actor: owner, memberId: seed.members.editor })).member
      ?.email as string;
  });
  after(async () => {
    await h.stop();
  });

  const newCase = async (actor = editor, name = "login") =>
    (
      await catalog.createTestCase({
        actor,
        projectId: seed.projectId,
        name,
        tags: ["a"],
        steps: [httpStep()],
      })
    ).testCase as TestCase;
  const getCase = async (id: string, version?: number) =>
    catalog.getTestCase({ actor: editor, projectId: seed.projectId, testCaseId: id, version });
  const storedVersions = async (table: string, key: string, id: string) =>
    (
      await h.db.query(`select version from catalog.${table} where ${key} = $1 order by version`, [id])
    ).rows.map((row) => row.version as number);

  describe("test cases", () => {
    it("start at version 1 and go up by one per stored change, naming who stored it", async () => {
      const created = await newCase();
      expect(created.version).to.equal(1);
      expect(created.updatedBy?.kind).to.deep.include({ case: "member" });
      expect(created.updatedBy?.kind.value).to.include({
        memberId: seed.members.editor,
        displayName: "A editor",
        email: editorEmail,
      });

      const renamed = await catalog.updateTestCase({
        actor: operatorNamed("ops-alice"),
        projectId: seed.projectId,
        testCaseId: created.id,
        name: "login v2",
      });
      expect(renamed.testCase?.version).to.equal(2);
      expect(renamed.testCase?.updatedBy?.kind).to.deep.equal({
        case: "operator",
        value: renamed.testCase?.updatedBy?.kind.value,
      });
      expect(renamed.testCase?.updatedBy?.kind.value).to.include({ name: "ops-alice" });

      const steps = await catalog.updateTestCase({
        actor: editor,
        projectId: seed.projectId,
        testCaseId: created.id,
        enabled: false,
        steps: { steps: [httpStep("/v3")] },
      });
      expect(steps.testCase?.version).to.equal(3);

      // A save that changes nothing stores nothing: same version, same time, no new snapshot.
      const same = await catalog.updateTestCase({
        actor: owner,
        projectId: seed.projectId,
        testCaseId: created.id,
        name: "login v2",
        tags: { tags: ["a"] },
        enabled: false,
        steps: { steps: [httpStep("/v3")] },
        expectedVersion: 3,
      });
      expect(same.testCase?.version).to.equal(3);
      expect(same.testCase?.updatedAt).to.deep.equal(steps.testCase?.updatedAt);
      expect(same.testCase?.updatedBy?.kind.value).to.include({ memberId: seed.members.editor });
      const nothing = await catalog.updateTestCase({
        actor: owner,
        projectId: seed.projectId,
        testCaseId: created.id,
      });
      expect(nothing.testCase?.version).to.equal(3);
      expect(await storedVersions("test_case_versions", "test_case_id", created.id)).to.deep.equal([1, 2, 3]);

      // Lists and GetTestCase say the same.
      const listed = await catalog.listTestCases({
        actor: editor,
        projectId: seed.projectId,
        testCaseIds: [created.id],
      });
      expect(listed.testCases[0]?.version).to.equal(3);
      expect((await getCase(created.id)).currentVersion).to.equal(3);
    });

    it("refuse a save or delete made on an old version, saying who changed it and when, and write nothing", async () => {
      const created = await newCase(owner, "checkout");
      const saved = await catalog.updateTestCase({
        actor: editor,
        projectId: seed.projectId,
        testCaseId: created.id,
        name: "checkout (editor)",
        expectedVersion: 1,
      });
      const changedAt = timestampDate(saved.testCase?.updatedAt as NonNullable<TestCase["updatedAt"]>);

      const refused = await conflictOf(
        catalog.updateTestCase({
          actor: owner,
          projectId: seed.projectId,
          testCaseId: created.id,
          name: "checkout (owner)",
          steps: { steps: [httpStep("/owner")] },
          expectedVersion: 1,
        }),
      );
      expect(refused.message).to.equal(
        `test case ${created.id} was changed by A editor (${editorEmail}) at ${changedAt.toISOString()}; ` +
          "this save was made on version 1, it is now version 2",
      );
      expect(refused.detail).to.include({ expectedVersion: 1, currentVersion: 2 });
      expect(refused.detail.changedBy?.kind.value).to.include({
        memberId: seed.members.editor,
        email: editorEmail,
      });
      expect(
        timestampDate(refused.detail.changedAt as NonNullable<typeof refused.detail.changedAt>),
      ).to.deep.equal(changedAt);

      // Nothing of the refused save was stored.
      const after = (await getCase(created.id)).testCase;
      expect(after).to.include({ name: "checkout (editor)", version: 2 });
      expect(httpStepOf(after?.steps[0])).to.deep.include({ request: httpStepOf(after?.steps[0])?.request });
      expect(JSON.stringify(after?.steps)).to.not.include("/owner");
      expect(await storedVersions("test_case_versions", "test_case_id", created.id)).to.deep.equal([1, 2]);

      // A save on an old version that would change nothing is refused all the same.
      await conflictOf(
        catalog.updateTestCase({
          actor: owner,
          projectId: seed.projectId,
          testCaseId: created.id,
          name: "checkout (editor)",
          expectedVersion: 1,
        }),
      );
      // Deleting on an old version keeps the test case; on the current one it goes, history too.
      const deleteRefused = await conflictOf(
        catalog.deleteTestCase({
          actor: owner,
          projectId: seed.projectId,
          testCaseId: created.id,
          expectedVersion: 1,
        }),
      );
      expect(deleteRefused.detail.currentVersion).to.equal(2);
      expect((await getCase(created.id)).testCase?.version).to.equal(2);
      await catalog.deleteTestCase({
        actor: owner,
        projectId: seed.projectId,
        testCaseId: created.id,
        expectedVersion: 2,
      });
      await rejects(getCase(created.id), Code.NotFound);
      expect(await storedVersions("test_case_versions", "test_case_id", created.id)).to.deep.equal([]);
    });

    it("store exactly one of two saves made on the same version at the same time", async () => {
      const created = await newCase();
      // Hold the row so every save reaches its update and waits there, then let them all go at once.
      const blocker = new pg.Client({ connectionString: h.env.DATABASE_URL });
      await blocker.connect();
      try {
        await blocker.query("begin");
        await blocker.query("select id from catalog.test_cases where id = $1 for update", [created.id]);
        const saves = ["first", "second", "third", "fourth"].map((name) =>
          catalog
            .updateTestCase({
              actor: editor,
              projectId: seed.projectId,
              testCaseId: created.id,
              name,
              expectedVersion: 1,
            })
            .then(
              (answer) => ({ stored: answer.testCase?.name }),
              (error: unknown) => ({ code: ConnectError.from(error).code }),
            ),
        );
        await waitForLockWaiters(h.db, saves.length);
        await blocker.query("commit");
        const outcomes = await Promise.all(saves);
        const stored = outcomes.flatMap((o) => ("stored" in o ? [o.stored] : []));
        expect(stored).to.have.length(1);
        expect(outcomes.filter((o) => "code" in o && o.code === Code.Aborted)).to.have.length(3);
        const after = (await getCase(created.id)).testCase;
        expect(after).to.include({ name: stored[0], version: 2 });
        expect(await storedVersions("test_case_versions", "test_case_id", created.id)).to.deep.equal([1, 2]);
      } finally {
        await blocker.end();
      }
    });

    it("without expected_version, save over whatever version is current (last write wins)", async () => {
      const created = await newCase();
      await catalog.updateTestCase({
        actor: owner,
        projectId: seed.projectId,
        testCaseId: created.id,
        name: "by the owner",
        expectedVersion: 1,
      });
      const over = await catalog.updateTestCase({
        actor: editor,
        projectId: seed.projectId,
        testCaseId: created.id,
        name: "by the editor",
      });
      expect(over.testCase).to.include({ name: "by the editor", version: 3 });
      await catalog.deleteTestCase({ actor: editor, projectId: seed.projectId, testCaseId: created.id });
      await rejects(getCase(created.id), Code.NotFound);
    });

    it("read back any kept version as it was stored, by whom and when", async () => {
      const created = await newCase();
      const v2 = await catalog.updateTestCase({
        actor: owner,
        projectId: seed.projectId,
        testCaseId: created.id,
        name: "two",
        tags: { tags: ["b", "c"] },
        steps: { steps: [httpStep("/two")] },
      });
      await catalog.updateTestCase({
        actor: editor,
        projectId: seed.projectId,
        testCaseId: created.id,
        name: "three",
        enabled: false,
      });
      const one = await getCase(created.id, 1);
      expect(one.currentVersion).to.equal(3);
      expect(one.testCase).to.include({ id: created.id, name: "login", enabled: true, version: 1 });
      expect(one.testCase?.tags).to.deep.equal(["a"]);
      expect(one.testCase?.steps).to.deep.equal(created.steps);
      expect(one.testCase?.updatedAt).to.deep.equal(created.updatedAt);
      expect(one.testCase?.updatedBy?.kind.value).to.include({ memberId: seed.members.editor });
      const two = await getCase(created.id, 2);
      expect(two.testCase).to.include({ name: "two", enabled: true, version: 2 });
      expect(two.testCase?.tags).to.deep.equal(["b", "c"]);
      expect(two.testCase?.steps).to.deep.equal(v2.testCase?.steps);
      expect(two.testCase?.updatedBy?.kind.value).to.include({ memberId: seed.members.owner });
      expect(two.testCase?.createdAt).to.deep.equal(created.createdAt);
      const three = await getCase(created.id, 3);
      expect(three.testCase).to.include({ name: "three", enabled: false, version: 3 });

      const beyond = await rejects(getCase(created.id, 4), Code.NotFound);
      expect(beyond.rawMessage).to.equal(`test case ${created.id} has no version 4: it is at version 3`);
      const zero = await rejects(getCase(created.id, 0), Code.InvalidArgument);
      expect(zero.rawMessage).to.equal("version must be 1 or more (got 0)");
      const badExpected = await rejects(
        catalog.updateTestCase({
          actor: editor,
          projectId: seed.projectId,
          testCaseId: created.id,
          name: "x",
          expectedVersion: 0,
        }),
        Code.InvalidArgument,
      );
      expect(badExpected.findDetails(FieldViolationsSchema)[0]?.violations.map((v) => v.field)).to.deep.equal(
        ["expected_version"],
      );
      // A version it never had is not "changed by" anyone since: the message says it does not exist.
      const future = await conflictOf(
        catalog.updateTestCase({
          actor: editor,
          projectId: seed.projectId,
          testCaseId: created.id,
          name: "x",
          expectedVersion: 2_147_483_647,
        }),
      );
      expect(future.message).to.match(
        new RegExp(`^test case ${created.id} has no version 2147483647: it is at version \\d+, stored by `),
      );
      expect(future.detail.expectedVersion).to.equal(2_147_483_647);
      await rejects(getCase(newId("tc"), 1), Code.NotFound);
    });

    it("keep the latest 100 versions, dropping the oldest with each new one", async () => {
      const created = await newCase();
      for (let n = 2; n <= 102; n++)
        await catalog.updateTestCase({
          actor: editor,
          projectId: seed.projectId,
          testCaseId: created.id,
          name: `name ${n}`,
          expectedVersion: n - 1,
        });
      const kept = await storedVersions("test_case_versions", "test_case_id", created.id);
      expect(kept).to.have.length(100);
      expect([kept[0], kept.at(-1)]).to.deep.equal([3, 102]);
      for (const gone of [1, 2]) {
        const error = await rejects(getCase(created.id, gone), Code.NotFound);
        expect(error.rawMessage).to.equal(
          `version ${gone} of test case ${created.id} is no longer kept: the catalog keeps the latest 100 versions (now 3 to 102)`,
        );
      }
      expect((await getCase(created.id, 3)).testCase?.name).to.equal("name 3");
    });

    it("are resolved for a run with the version their name and steps are", async () => {
      const created = await newCase();
      await catalog.updateTestCase({
        actor: editor,
        projectId: seed.projectId,
        testCaseId: created.id,
        steps: { steps: [httpStep("/second")] },
      });
      await catalog.createEnvironment({
        actor: editor,
        projectId: seed.projectId,
        name: unique("env"),
        baseUrl: "https://shop.test",
      });
      const resolved = await catalog.resolveRunSelection({
        actor: editor,
        projectId: seed.projectId,
        selection: { case: "testCaseIds", value: { ids: [created.id] } },
      });
      expect(resolved.testCases.map((c) => [c.testCaseId, c.version])).to.deep.equal([[created.id, 2]]);
    });
    it("hold record_trace as part of their content: set, changed, kept by each version, listed and resolved", async () => {
      const projectId = seed.projectId;
      const created = (
        await catalog.createTestCase({
          actor: editor,
          projectId,
          name: unique("traced"),
          tags: ["traced"],
          steps: [httpStep()],
          recordTrace: true,
        })
      ).testCase as TestCase;
      expect(created).to.include({ recordTrace: true, version: 1 });
      expect((await newCase()).recordTrace, "unset means false").to.equal(false);

      // Another field's change keeps it; setting it to what it is stores nothing; a change of it is a version.
      const renamed = await catalog.updateTestCase({
        actor: editor,
        projectId,
        testCaseId: created.id,
        name: "renamed",
      });
      expect(renamed.testCase).to.include({ recordTrace: true, version: 2 });
      const same = await catalog.updateTestCase({
        actor: editor,
        projectId,
        testCaseId: created.id,
        recordTrace: true,
      });
      expect(same.testCase).to.include({ recordTrace: true, version: 2 });
      const off = await catalog.updateTestCase({
        actor: editor,
        projectId,
        testCaseId: created.id,
        recordTrace: false,
        expectedVersion: 2,
      });
      expect(off.testCase).to.include({ recordTrace: false, version: 3 });
      expect((await getCase(created.id, 2)).testCase).to.include({ recordTrace: true, version: 2 });
      expect((await getCase(created.id, 3)).testCase).to.include({ recordTrace: false, version: 3 });
      expect((await getCase(created.id)).testCase?.recordTrace).to.equal(false);

      await catalog.updateTestCase({ actor: editor, projectId, testCaseId: created.id, recordTrace: true });
      const listed = await catalog.listTestCases({ actor: editor, projectId, testCaseIds: [created.id] });
      expect(listed.testCases.map((t) => [t.recordTrace, t.version])).to.deep.equal([[true, 4]]);
      const plain = await newCase();
      const { testPlan } = await catalog.createTestPlan({
        actor: editor,
        projectId,
        name: unique("traced plan"),
        description: "",
        testCaseIds: [plain.id, created.id],
      });
      await catalog.createEnvironment({
        actor: editor,
        projectId,
        name: unique("env"),
        baseUrl: "https://shop.test",
      });
      for (const selection of [
        { case: "testCaseIds" as const, value: { ids: [plain.id, created.id] } },
        { case: "testPlan" as const, value: testPlan?.id as string },
      ]) {
        const resolved = await catalog.resolveRunSelection({ actor: editor, projectId, selection });
        expect(resolved.testCases.map((c) => [c.testCaseId, c.recordTrace])).to.deep.equal([
          [plain.id, false],
          [created.id, true],
        ]);
      }
      const byTag = await catalog.resolveRunSelection({
        actor: editor,
        projectId,
        selection: { case: "tags", value: { tags: ["traced"] } },
      });
      expect(byTag.testCases.map((c) => [c.testCaseId, c.recordTrace])).to.deep.equal([[created.id, true]]);
    });
  });

  describe("test plans", () => {
    const newPlan = async (testCaseIds: string[]) =>
      (
        await catalog.createTestPlan({
          actor: editor,
          projectId: seed.projectId,
          name: unique("plan"),
          description: "",
          testCaseIds,
        })
      ).testPlan;

    it("are versioned as test cases are, and deleting a test case they hold is a new version", async () => {
      const [a, b] = [await newCase(), await newCase()];
      const plan = await newPlan([a.id, b.id]);
      expect(plan?.version).to.equal(1);
      expect(plan?.updatedBy?.kind.value).to.include({ memberId: seed.members.editor });
      const planId = plan?.id as string;

      const reordered = await catalog.updateTestPlan({
        actor: owner,
        projectId: seed.projectId,
        testPlanId: planId,
        testCaseIds: { ids: [b.id, a.id] },
        expectedVersion: 1,
      });
      expect(reordered.testPlan?.version).to.equal(2);
      // The same list again changes nothing.
      const same = await catalog.updateTestPlan({
        actor: owner,
        projectId: seed.projectId,
        testPlanId: planId,
        testCaseIds: { ids: [b.id, a.id] },
        name: plan?.name,
        expectedVersion: 2,
      });
      expect(same.testPlan?.version).to.equal(2);

      await catalog.deleteTestCase({
        actor: operatorNamed("ops-bob"),
        projectId: seed.projectId,
        testCaseId: a.id,
      });
      const after = await catalog.getTestPlan({
        actor: editor,
        projectId: seed.projectId,
        testPlanId: planId,
      });
      expect(after.testPlan).to.include({ version: 3, testCaseCount: 1 });
      expect(after.testPlan?.updatedBy?.kind.value).to.include({ name: "ops-bob" });

      // A save on version 2 that still names the deleted case hears of the deletion, not of the id.
      const refused = await conflictOf(
        catalog.updateTestPlan({
          actor: owner,
          projectId: seed.projectId,
          testPlanId: planId,
          testCaseIds: { ids: [a.id, b.id] },
          expectedVersion: 2,
        }),
      );
      expect(refused.message).to.match(
        new RegExp(
          `^test plan ${planId} was changed by operator ops-bob at .+; this save was made on version 2, it is now version 3$`,
        ),
      );

      // Old versions read back as they were, the deleted case included.
      const v2 = await catalog.getTestPlan({
        actor: editor,
        projectId: seed.projectId,
        testPlanId: planId,
        version: 2,
      });
      expect(v2.testPlan?.testCaseIds).to.deep.equal([b.id, a.id]);
      expect(v2.testPlan?.updatedBy?.kind.value).to.include({ memberId: seed.members.owner });
      expect(v2.currentVersion).to.equal(3);
      const v1 = await catalog.getTestPlan({
        actor: editor,
        projectId: seed.projectId,
        testPlanId: planId,
        version: 1,
      });
      expect(v1.testPlan?.testCaseIds).to.deep.equal([a.id, b.id]);

      await conflictOf(
        catalog.deleteTestPlan({
          actor: editor,
          projectId: seed.projectId,
          testPlanId: planId,
          expectedVersion: 2,
        }),
      );
      await catalog.deleteTestPlan({
        actor: editor,
        projectId: seed.projectId,
        testPlanId: planId,
        expectedVersion: 3,
      });
      expect(await storedVersions("test_plan_versions", "plan_id", planId)).to.deep.equal([]);
    });

    it("store exactly one of two saves made on the same version at the same time", async () => {
      const cases = [await newCase(), await newCase()];
      const plan = await newPlan([cases[0]?.id as string]);
      const planId = plan?.id as string;
      const blocker = new pg.Client({ connectionString: h.env.DATABASE_URL });
      await blocker.connect();
      try {
        await blocker.query("begin");
        await blocker.query("select id from catalog.test_plans where id = $1 for update", [planId]);
        const saves = ["first", "second", "third"].map((name, i) =>
          catalog
            .updateTestPlan({
              actor: editor,
              projectId: seed.projectId,
              testPlanId: planId,
              name,
              testCaseIds: { ids: i === 0 ? [] : cases.map((c) => c.id) },
              expectedVersion: 1,
            })
            .then(
              (answer) => ({ stored: answer.testPlan?.name }),
              (error: unknown) => ({ code: ConnectError.from(error).code }),
            ),
        );
        await waitForLockWaiters(h.db, saves.length);
        await blocker.query("commit");
        const outcomes = await Promise.all(saves);
        expect(outcomes.filter((o) => "stored" in o)).to.have.length(1);
        expect(outcomes.filter((o) => "code" in o && o.code === Code.Aborted)).to.have.length(2);
        const after = await catalog.getTestPlan({
          actor: editor,
          projectId: seed.projectId,
          testPlanId: planId,
        });
        expect(after.testPlan?.version).to.equal(2);
        const winner = outcomes.find((o) => "stored" in o) as { stored: string };
        expect(after.testPlan?.name).to.equal(winner.stored);
        expect(after.testPlan?.testCaseIds).to.deep.equal(
          winner.stored === "first" ? [] : cases.map((c) => c.id),
        );
      } finally {
        await blocker.end();
      }
    });
  });

  describe("test cases and plans stored before versions were kept", () => {
    it("are at version 1, readable as such, with nobody recorded", async () => {
      const projectId = seed.projectId;
      // The schema as it was before the migration (and the later ones), holding one test case and one plan.
      const migrations = [
        "Migration20261125013339_versions",
        "Migration20261125042617_record_trace",
        "Migration20261128183000_retries",
        "Migration20261128220743_playwright_specs",
      ];
      await h.db.query(`
        drop table catalog.test_case_versions; drop table catalog.test_plan_versions;
        alter table catalog.test_cases drop column version; alter table catalog.test_plans drop column version;
        alter table catalog.test_cases drop column record_trace;
        alter table catalog.test_cases drop column retries; alter table catalog.test_plans drop column retries;
        alter table catalog.test_cases drop column playwright;`);
      const caseId = newId("tc");
      const planId = newId("pln");
      const then = new Date("2026-11-01T10:00:00.000Z");
      await h.db.query(
        `insert into catalog.test_cases (id, project_id, name, tags, enabled, steps, created_at, updated_at)
         values ($1, $2, 'old case', '{x}', true, $3, $4, $4)`,
        [
          caseId,
          projectId,
          JSON.stringify([{ name: "call", http: { request: { method: "GET", path: "/" } } }]),
          then,
        ],
      );
      await h.db.query(
        `insert into catalog.test_plans (id, project_id, name, description, created_at, updated_at)
         values ($1, $2, 'old plan', 'd', $3, $3)`,
        [planId, projectId, then],
      );
      await h.db.query(
        "insert into catalog.test_plan_cases (plan_id, position, test_case_id) values ($1, 0, $2)",
        [planId, caseId],
      );
      await h.db.query("delete from catalog.mikro_orm_migrations where name = any($1)", [migrations]);
      await runServiceCommand("catalog", ["migrate"], h.env);

      const old = await getCase(caseId, 1);
      expect(old.testCase).to.include({ name: "old case", version: 1, recordTrace: false, retries: 0 });
      expect(old.testCase?.updatedBy).to.equal(undefined);
      expect(timestampDate(old.testCase?.updatedAt as NonNullable<TestCase["updatedAt"]>)).to.deep.equal(
        then,
      );
      const plan = await catalog.getTestPlan({ actor: editor, projectId, testPlanId: planId, version: 1 });
      expect(plan.testPlan).to.include({ name: "old plan", version: 1 });
      expect(plan.testPlan?.retries, "a plan from before sets no retries").to.equal(undefined);
      expect(plan.testPlan?.testCaseIds).to.deep.equal([caseId]);
      // A save on a version it never had names nobody, and the next save is version 2.
      const refused = await conflictOf(
        catalog.updateTestCase({
          actor: editor,
          projectId,
          testCaseId: caseId,
          name: "n",
          expectedVersion: 5,
        }),
      );
      expect(refused.message).to.equal(
        `test case ${caseId} has no version 5: it is at version 1, stored by someone (not recorded) at ${then.toISOString()}; read it again and save on that version`,
      );
      const saved = await catalog.updateTestCase({
        actor: editor,
        projectId,
        testCaseId: caseId,
        name: "n",
        expectedVersion: 1,
      });
      expect(saved.testCase?.version).to.equal(2);
    });
  });
});
