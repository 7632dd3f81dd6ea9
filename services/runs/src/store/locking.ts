import type { EntityManager } from "@mikro-orm/postgresql";
import type { Orm } from "@testrun/kit";
import {
  type RunRow,
  type RunWithTests,
  runColumns,
  type TestRow,
  testArtifactsColumn,
  testColumns,
} from "../rows.js";

// The rules every write to the runs schema follows. A change to a test happens in a transaction
// that first locks its run's row (`for update`), then the test's: concurrent completions of one run
// are serialised, the run's status and counts are recomputed from its tests in the same
// transaction (settle.ts), and the lock order (run, then test) never deadlocks. Times come from the
// database clock, so replicas agree on when a lease lapsed.

/** Carries a refusal out of `transaction`, so that what the refused work wrote is rolled back. */
class Refusal {
  constructor(readonly outcome: unknown) {}
}

/**
 * Runs `work` in a transaction on a fresh fork and answers its outcome. `refuse(outcome)` ends the
 * work there: the transaction rolls back (whatever the work wrote before is undone) and `outcome`
 * is the answer.
 */
export async function transaction<T>(
  orm: Orm,
  work: (em: EntityManager, refuse: (outcome: T) => never) => Promise<T>,
): Promise<T> {
  const refuse = (outcome: T): never => {
    throw new Refusal(outcome);
  };
  try {
    return await orm.em.fork().transactional((em) => work(em, refuse));
  } catch (error) {
    if (error instanceof Refusal) return error.outcome as T;
    throw error;
  }
}

/** Locks the charged run `where` selects (as `r`); undefined when there is none. */
export async function lockRun(
  em: EntityManager,
  where: string,
  params: unknown[],
): Promise<RunRow | undefined> {
  const rows = await em.execute<RunRow[]>(
    `select ${runColumns} from runs.runs r where ${where} and r.charge_state = 'charged' for update`,
    params,
  );
  return rows[0];
}

/** Locks a test's run, then the test; undefined when either is unknown or not started. */
export async function lockTest(
  em: EntityManager,
  testResultId: string,
): Promise<{ run: RunRow; test: TestRow } | undefined> {
  const run = await lockRun(em, "r.id = (select run_id from runs.test_results where id = ?)", [testResultId]);
  if (!run) return undefined;
  const tests = await em.execute<TestRow[]>(
    `select ${testColumns} from runs.test_results t where t.id = ? for update`,
    [testResultId],
  );
  const test = tests[0];
  return test ? { run, test } : undefined;
}

/** A run's tests, in their order, with their artifacts. */
export function testsOf(em: EntityManager, runId: string): Promise<TestRow[]> {
  return em.execute<TestRow[]>(
    `select ${testColumns}, ${testArtifactsColumn} from runs.test_results t where t.run_id = ? order by t.position`,
    [runId],
  );
}

/** A run and its tests as the transaction left them. */
export async function runWithTests(em: EntityManager, runId: string): Promise<RunWithTests> {
  const runs = await em.execute<RunRow[]>(`select ${runColumns} from runs.runs r where r.id = ?`, [runId]);
  return { run: runs[0] as RunRow, tests: await testsOf(em, runId) };
}

/** A run and one of its tests (with its artifacts) as the transaction left them. */
export async function reread(
  em: EntityManager,
  runId: string,
  testId: string,
): Promise<{ run: RunRow; test: TestRow }> {
  const runs = await em.execute<RunRow[]>(`select ${runColumns} from runs.runs r where r.id = ?`, [runId]);
  const tests = await em.execute<TestRow[]>(
    `select ${testColumns}, ${testArtifactsColumn} from runs.test_results t where t.id = ?`,
    [testId],
  );
  return { run: runs[0] as RunRow, test: tests[0] as TestRow };
}
