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
  return (await slotsLeft(em, projectId, maxRunning, 1)) === 0;
}

/**
 * How many of `wanted` new claims of a project may be taken now (ClaimTests): as many as
 * `wanted` claims one after the other would get, each counting those before it. All of them while
 * no other project waits or while the project stays within `maxRunning`; else what is left of its
 * share. Takes the project's advisory lock as overShare does.
 */
export async function slotsLeft(
  em: EntityManager,
  projectId: string,
  maxRunning: number,
  wanted: number,
): Promise<number> {
  if (maxRunning <= 0 || wanted <= 0) return wanted;
  await em.execute("select pg_advisory_xact_lock(hashtext(?))", [claimLockKey(projectId)]);
  const [held] = await em.execute<{ n: number }[]>(`select (${liveLeases("?")})::int as n`, [projectId]);
  const holds = held?.n ?? 0;
  if (holds + wanted <= maxRunning) return wanted;
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
  return waiting?.waits === true ? Math.max(0, maxRunning - holds) : wanted;
}
