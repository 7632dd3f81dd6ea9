// Retention of the automation history (docs/automation.md, "Retention"): finished deliveries and
// ticks older than the retention are deleted, pending ones and recent ones stay.
import type { Orm } from "@testrun/kit";
import { migratedTestDatabase } from "@testrun/testing";
import { expect } from "chai";

const day = 86_400_000;

describe("automation history retention", () => {
  let orm: Orm;
  let pruneHistory: (orm: Orm, retentionDays: number) => Promise<number>;

  before(async () => {
    // The service's own modules through import(), as the in-process tests load service code.
    const { database } = await import("../src/db/index.js");
    ({ pruneHistory } = await import("../src/history.js"));
    ({ orm } = await migratedTestDatabase(database));
  });
  after(() => orm?.close());

  const ago = (days: number) => new Date(Date.now() - days * day);

  async function addDelivery(id: string, state: string, createdAt: Date) {
    await orm.em.fork().execute(
      `insert into automation.deliveries (id, webhook_id, project_id, event_type, body, state, created_at)
       values (?, 'whk_1', 'prj_1', 'run.finished', '{}', ?, ?)`,
      [id, state, createdAt],
    );
  }
  async function addTick(scheduleId: string, state: string, dueAt: Date) {
    await orm.em.fork().execute(
      `insert into automation.schedule_ticks (schedule_id, due_at, project_id, state, retry_at, created_at)
       values (?, ?, 'prj_1', ?, ?, ?)`,
      [scheduleId, dueAt, state, dueAt, dueAt],
    );
  }
  const ids = async (sql: string) =>
    (await orm.em.fork().execute<{ id: string }[]>(sql)).map((row) => row.id).sort();

  it("deletes finished deliveries and ticks past the retention, keeping pending and recent ones", async () => {
    await addDelivery("dlv_old_delivered", "delivered", ago(31));
    await addDelivery("dlv_old_failed", "failed", ago(40));
    await addDelivery("dlv_old_pending", "pending", ago(45));
    await addDelivery("dlv_recent", "delivered", ago(29));
    await addTick("sch_old_started", "started", ago(31));
    await addTick("sch_old_failed", "failed", ago(31));
    await addTick("sch_old_pending", "pending", ago(31));
    await addTick("sch_recent", "started", ago(1));

    expect(await pruneHistory(orm, 30)).to.equal(4);

    expect(await ids("select id from automation.deliveries")).to.deep.equal([
      "dlv_old_pending",
      "dlv_recent",
    ]);
    expect(await ids("select schedule_id as id from automation.schedule_ticks")).to.deep.equal([
      "sch_old_pending",
      "sch_recent",
    ]);
    expect(await pruneHistory(orm, 30), "nothing left to prune").to.equal(0);
  });
});
