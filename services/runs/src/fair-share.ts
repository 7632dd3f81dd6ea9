// Fair claiming: one project's backlog cannot hold every executor slot while another project's
// tests wait. A project may run more than its share only while no other project waits for a slot
// (work-conserving: a lone project still uses every slot).
import type { EntityManager } from "@mikro-orm/postgresql";

/** Key of the transaction-scoped advisory lock that serialises one project's new claims. */
export const claimLockKey = (projectId: string) => `runs.fair-share:${projectId}`;

/** Live leases of a project: RUNNING tests whose lease has not lapsed (a lapsed one holds no slot). */
const liveLeases = (project: string) =>
  `select count(*) from runs.test_results t join runs.runs r on r.id = t.run_id
   where r.project_id = ${project} and t.status = 'running' and t.lease_expires_at > now()`;

/**
 * Whether a project must leave a slot to others now: it already holds `maxRunning` live leases (or
 * more), and another project has a QUEUED test of a charged run and holds fewer than `maxRunning`
 * itself (one at its share too would be refused, so it does not count as waiting).
 *
 * Called inside the claim's transaction. It first takes the project's advisory lock, held until the
 * transaction ends: two claims of one project (of different runs, whose row locks do not meet)
 * would otherwise both count the same leases and both take the last slot of its share. Under READ
 * COMMITTED each statement after the lock sees the claims committed before it was granted.
 */
export async function overShare(em: EntityManager, projectId: string, maxRunning: number): Promise<boolean> {
  if (maxRunning <= 0) return false;
  await em.execute("select pg_advisory_xact_lock(hashtext(?))", [claimLockKey(projectId)]);
  const [held] = await em.execute<{ n: number }[]>(`select (${liveLeases("?")})::int as n`, [projectId]);
  if ((held?.n ?? 0) < maxRunning) return false;
  // Another project waits: QUEUED tests (the pending index holds them) of a project below its share.
  const [waiting] = await em.execute<{ waits: boolean }[]>(
    `select exists (
       select 1 from runs.test_results q join runs.runs qr on qr.id = q.run_id
       where q.status = 'queued' and qr.charge_state = 'charged' and qr.project_id <> ?
       group by qr.project_id
       having (${liveLeases("qr.project_id")}) < ?
     ) as waits`,
    [projectId, maxRunning],
  );
  return waiting?.waits === true;
}
