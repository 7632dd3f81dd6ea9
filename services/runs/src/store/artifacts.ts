import type { EntityManager } from "@mikro-orm/postgresql";
import { newId, type Orm } from "@testrun/kit";
import type { ArtifactKind } from "../db/entities.js";
import { type ArtifactRow, artifactColumns, isFinal, readableArtifact } from "../rows.js";
import { lockTest, transaction } from "./locking.js";

/** A Playwright spec test's steps at most (CompleteTestRequest.step_results). */
const maxSpecSteps = 200;

/**
 * How long an upload may take before its artifact counts as abandoned: longer than the object
 * store's request timeout with its retries (artifacts/s3-contents.ts), so that the sweeper never
 * deletes the bytes of an upload still under way (they would be left behind without a row).
 */
export const uploadGraceMs = 10 * 60_000;

/** The caps PutArtifact keeps (config: ARTIFACT_MAX_BYTES is checked before anything is read). */
export interface ArtifactCaps {
  /** RUN_ARTIFACTS_MAX_BYTES: all the artifacts of one run together. */
  runMaxBytes: number;
  /** TEST_ARTIFACTS_MAX_COUNT: the artifacts of one attempt of one test. */
  testMaxCount: number;
  /** ARTIFACT_RETENTION_DAYS: how long a new artifact is kept. */
  retentionDays: number;
}

export interface NewArtifact {
  testResultId: string;
  leaseToken: string;
  kind: ArtifactKind;
  name: string;
  contentType: string;
  sizeBytes: number;
  step: number;
}

export type ReserveOutcome =
  | { kind: "reserved"; artifact: ArtifactRow }
  /** No such test, or its project was deleted. */
  | { kind: "not_found" }
  | { kind: "final" }
  | { kind: "not_current" }
  | { kind: "no_such_step"; steps: number }
  | { kind: "too_many"; max: number }
  | { kind: "run_full"; used: number; max: number };

/** What ends a pending artifact: its state becomes `deleting`, due now, or after the upload grace for one still pending. */
const markDeleting = `state = 'deleting',
  delete_after = case when state = 'pending' then greatest(now(), created_at + ? * interval '1 millisecond') else now() end`;

/**
 * Drops the uploads of the test's earlier attempts that never completed (store/claims.ts, in the
 * transaction of a new claim, which holds the test's lock): their executor is gone or moved on.
 * The stored ones stay with the attempt that produced them (TestAttempt.artifacts). The sweeper
 * deletes what is dropped.
 */
export async function dropUnfinishedUploads(em: EntityManager, testResultId: string): Promise<void> {
  await em.execute(
    `update runs.artifacts set ${markDeleting} where test_result_id = ? and state = 'pending'`,
    [uploadGraceMs, testResultId],
  );
}

/**
 * The metadata of artifacts (the bytes are the store's: artifacts/contents.ts). An artifact is
 * reserved (`pending`: it counts against the caps) under the test's lock, its bytes are stored,
 * then it is confirmed (`stored`); anything that ends it first (a new claim, a deleted project, a
 * failed upload) marks it `deleting`, and the sweeper deletes its bytes and then its row.
 */
export class ArtifactStore {
  constructor(
    private readonly orm: Orm,
    private readonly caps: ArtifactCaps,
  ) {}

  /**
   * Takes the artifact's place under the test's claim: the lease is the current one, the test not
   * final, its project not deleted, the step one of its steps, and the caps of the test's attempt
   * and of the run hold with it. Locks the run then the test (store/locking.ts), so concurrent
   * artifacts of one run are counted one after the other.
   */
  reserve(put: NewArtifact): Promise<ReserveOutcome> {
    return transaction<ReserveOutcome>(this.orm, async (em, refuse) => {
      const { run, test } = (await lockTest(em, put.testResultId)) ?? refuse({ kind: "not_found" });
      const [purged] = await em.execute<{ purged: boolean }[]>(
        "select exists (select 1 from runs.purged_projects where project_id = ?) as purged",
        [run.project_id],
      );
      if (purged?.purged) return refuse({ kind: "not_found" });
      if (isFinal(test.status)) return refuse({ kind: "final" });
      if (test.status !== "running" || test.lease_token !== put.leaseToken)
        return refuse({ kind: "not_current" });
      // A spec test's steps are its `test()`s, known only as it runs: up to CompleteTest's bound.
      const steps = test.has_spec ? maxSpecSteps : test.steps.length;
      if (put.step > steps) return refuse({ kind: "no_such_step", steps });
      const [usage] = await em.execute<{ test_count: number; run_bytes: string }[]>(
        `select count(*) filter (where test_result_id = ?)::int as test_count, coalesce(sum(size_bytes), 0)::text as run_bytes
         from runs.artifacts where run_id = ? and state <> 'deleting'`,
        [test.id, run.id],
      );
      if ((usage?.test_count ?? 0) >= this.caps.testMaxCount)
        return refuse({ kind: "too_many", max: this.caps.testMaxCount });
      const used = Number(usage?.run_bytes ?? 0);
      if (used + put.sizeBytes > this.caps.runMaxBytes)
        return refuse({ kind: "run_full", used, max: this.caps.runMaxBytes });
      const rows = await em.execute<ArtifactRow[]>(
        `insert into runs.artifacts as a (id, project_id, run_id, test_result_id, attempt, kind, name, content_type,
           size_bytes, step, state, created_at, expires_at)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', now(), now() + ? * interval '1 day')
         returning ${artifactColumns}`,
        [
          newId("art"),
          run.project_id,
          run.id,
          test.id,
          test.attempt,
          put.kind,
          put.name,
          put.contentType,
          put.sizeBytes,
          put.step,
          this.caps.retentionDays,
        ],
      );
      return { kind: "reserved", artifact: rows[0] as ArtifactRow };
    });
  }

  /**
   * Makes a reserved artifact readable once its bytes are stored; undefined when something ended
   * it meanwhile (a new claim of the test, its project deleted): its bytes are the sweeper's then.
   */
  async confirm(id: string): Promise<ArtifactRow | undefined> {
    const rows = await this.orm.em.fork().execute<ArtifactRow[]>(
      `update runs.artifacts a set state = 'stored' where a.id = ? and a.state = 'pending'
         and not exists (select 1 from runs.purged_projects p where p.project_id = a.project_id)
       returning ${artifactColumns}`,
      [id],
    );
    return rows[0];
  }

  /** Ends a reserved artifact whose upload failed: the sweeper deletes whatever bytes reached the store. */
  async abandon(id: string): Promise<void> {
    await this.orm.em
      .fork()
      .execute(
        "update runs.artifacts set state = 'deleting', delete_after = now() where id = ? and state <> 'deleting'",
        [id],
      );
  }

  /** A readable artifact (GetArtifact); undefined when unknown, not yet stored, expired, dropped or of a deleted project. */
  async find(id: string): Promise<ArtifactRow | undefined> {
    const rows = await this.orm.em
      .fork()
      .execute<ArtifactRow[]>(
        `select ${artifactColumns} from runs.artifacts a where a.id = ? and ${readableArtifact}`,
        [id],
      );
    return rows[0];
  }

  /**
   * Records that the project was deleted, so its artifacts are unreadable and PutArtifact refuses
   * new ones from now on; marks up to `limit` of its artifacts for deletion (the sweeper marks the
   * rest). Answers how many of its artifacts are left to delete. Idempotent.
   */
  async purgeProject(projectId: string, limit: number): Promise<number> {
    const em = this.orm.em.fork();
    await em.execute(
      "insert into runs.purged_projects (project_id, purged_at) values (?, now()) on conflict (project_id) do nothing",
      [projectId],
    );
    await em.execute(
      `update runs.artifacts set ${markDeleting}
       where id in (select id from runs.artifacts where project_id = ? and state <> 'deleting' limit ? for update skip locked)`,
      [uploadGraceMs, projectId, limit],
    );
    const [left] = await em.execute<{ left: number }[]>(
      "select count(*)::int as left from runs.artifacts where project_id = ?",
      [projectId],
    );
    return left?.left ?? 0;
  }

  // ---------------------------------------------------------------- the sweeper's (artifacts/sweeper.ts)

  /**
   * Marks for deletion up to `limit` artifacts of each kind that must go: stored ones past their
   * retention, uploads that never finished within the grace, and any of a deleted project
   * (stragglers an executor stored while the project was being deleted). Answers how many.
   */
  async markDue(limit: number): Promise<number> {
    const em = this.orm.em.fork();
    const marked = await em.execute<{ id: string }[]>(
      `with expired as (
         select id from runs.artifacts where state = 'stored' and expires_at <= now()
         order by expires_at limit ? for update skip locked),
       abandoned as (
         select id from runs.artifacts where state = 'pending' and created_at < now() - ? * interval '1 millisecond'
         order by created_at limit ? for update skip locked),
       purged as (
         select a.id from runs.artifacts a join runs.purged_projects p on p.project_id = a.project_id
         where a.state <> 'deleting' limit ? for update of a skip locked)
       update runs.artifacts set ${markDeleting}
       where id in (select id from expired union select id from abandoned union select id from purged)
       returning id`,
      [limit, uploadGraceMs, limit, limit, uploadGraceMs],
    );
    return marked.length;
  }

  /**
   * Takes up to `limit` artifacts due for deletion, optionally of one project: pushes their
   * deletion time out by `holdMs`, so that another replica's sweeper leaves them alone meanwhile
   * (and takes them again should this one fail to delete them).
   */
  async takeDeletable(limit: number, holdMs: number, projectId?: string): Promise<ArtifactRow[]> {
    return this.orm.em.fork().execute<ArtifactRow[]>(
      `update runs.artifacts a set delete_after = now() + ? * interval '1 millisecond'
       where a.id in (select id from runs.artifacts where state = 'deleting' and delete_after <= now()
                        and (?::text is null or project_id = ?)
                      order by delete_after limit ? for update skip locked)
       returning ${artifactColumns}`,
      [holdMs, projectId ?? null, projectId ?? null, limit],
    );
  }

  /** Deletes the rows of artifacts whose bytes are gone. */
  async deleteRows(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.orm.em
      .fork()
      .execute(
        "delete from runs.artifacts where state = 'deleting' and id in (select jsonb_array_elements_text(?::jsonb))",
        [JSON.stringify(ids)],
      );
  }
}
