import type { Orm } from "@testrun/kit";

/** When tests were last handed to the executors' queue (dispatcher.ts), for the reconciler's republishing. */
export class PublicationStore {
  constructor(private readonly orm: Orm) {}

  /**
   * Bookkeeping only (when to publish again), so rows another transaction holds (a skip or a
   * cancel locking a run's tests) are passed over rather than waited for: waiting, with locks
   * taken in another order, could deadlock.
   */
  async markPublished(testResultIds: string[]): Promise<void> {
    if (testResultIds.length === 0) return;
    await this.orm.em.fork().execute(
      `update runs.test_results set published_at = now(), publish_count = publish_count + 1
       where id in (select id from runs.test_results where id in (select jsonb_array_elements_text(?::jsonb))
                    for update skip locked)`,
      [JSON.stringify(testResultIds)],
    );
  }
}
