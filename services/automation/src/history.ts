import type { Orm } from "@testrun/kit";

/** Rows deleted per statement, so one pass never holds a long lock on a big backlog. */
const pruneBatch = 1_000;

/**
 * Deletes finished history older than `retentionDays`: deliveries delivered or failed (each holds
 * a whole run's JSON) and ticks started or failed (an every-minute schedule adds 1,440 a day).
 * Pending ones are work, never history, whatever their age. docs/automation.md, "Retention".
 * Returns how many rows it deleted (a full batch means more may be left: the loop runs again).
 */
export async function pruneHistory(orm: Orm, retentionDays: number): Promise<number> {
  const em = orm.em.fork();
  const before = new Date(Date.now() - retentionDays * 86_400_000);
  const deliveries = await em.execute<{ id: string }[]>(
    `delete from automation.deliveries where id in (
       select id from automation.deliveries where state <> 'pending' and created_at < ? limit ${pruneBatch}
     ) returning id`,
    [before],
  );
  const ticks = await em.execute<{ schedule_id: string }[]>(
    `delete from automation.schedule_ticks where (schedule_id, due_at) in (
       select schedule_id, due_at from automation.schedule_ticks
       where state <> 'pending' and due_at < ? limit ${pruneBatch}
     ) returning schedule_id`,
    [before],
  );
  return deliveries.length + ticks.length;
}
