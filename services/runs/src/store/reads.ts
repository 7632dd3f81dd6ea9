import type { Orm } from "@testrun/kit";
import type { RunStatus } from "../db/entities.js";
import {
  type RunRow,
  type RunWithTests,
  runColumns,
  type TestRow,
  testArtifactsColumn,
  testColumns,
  testHealthColumns,
} from "../rows.js";

/** Which runs ListRuns returns; empty or unset fields do not filter. */
export interface RunFilter {
  statuses: RunStatus[];
  testPlanId?: string;
  environmentId?: string;
}

/**
 * Where a page ends: the last run's created_at at PostgreSQL's full precision (microseconds, in
 * UTC, as text: a JavaScript Date keeps milliseconds, and runs created within one millisecond would
 * be skipped or repeated) and its id, which orders runs created in the same microsecond.
 */
interface PageEnd {
  createdAt: string;
  id: string;
}

const createdAtPattern = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3})\d{3}Z$/;

/** Opaque to callers: base64url of JSON, checked in full when it comes back. */
export function encodePageToken(end: PageEnd): string {
  return Buffer.from(JSON.stringify({ c: end.createdAt, i: end.id })).toString("base64url");
}

/** The page end a token carries; undefined when it was not made by encodePageToken. */
export function decodePageToken(token: string): PageEnd | undefined {
  try {
    const { c, i } = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Record<string, unknown>;
    if (typeof c !== "string" || typeof i !== "string" || i.length === 0 || i.length > 100) return undefined;
    // A well-formed but impossible time (February 31st) would make the query itself fail.
    const millis = createdAtPattern.exec(c)?.[1];
    const date = millis === undefined ? undefined : new Date(`${millis}Z`);
    if (!date || Number.isNaN(date.getTime()) || date.toISOString() !== `${millis}Z`) return undefined;
    return { createdAt: c, id: i };
  } catch {
    return undefined;
  }
}

/** Where ListFinishedRuns' caller stands: the last run it was given, by (finished_at, id). */
export interface FinishedCursor {
  finishedAt: string;
  id: string;
}

/** Opaque to callers, like page tokens: base64url of JSON, checked in full when it comes back. */
export const encodeFinishedCursor = (end: FinishedCursor): string =>
  Buffer.from(JSON.stringify({ f: end.finishedAt, i: end.id })).toString("base64url");

/** The cursor a text carries; undefined when it was not made by encodeFinishedCursor. */
export function decodeFinishedCursor(text: string): FinishedCursor | undefined {
  let fields: Record<string, unknown>;
  try {
    fields = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof fields !== "object" || fields === null) return undefined;
  // The same checks as a page token's (its time and id have the same forms).
  const page = decodePageToken(encodePageToken({ createdAt: String(fields.f), id: String(fields.i) }));
  return page && { finishedAt: page.createdAt, id: page.id };
}

/**
 * How long a finished run waits before ListFinishedRuns shows it: finished_at is the finishing
 * transaction's start, so a run committed a moment after another that finished later would be
 * passed by a cursor already beyond it (runs.proto, ListFinishedRuns).
 */
export const finishedRunsSettleMs = 2_000;

/**
 * Reads that change nothing and take no locks: a run with its tests, pages of runs and one test
 * result. Only charged runs are visible, as everywhere.
 */
export class RunReads {
  constructor(private readonly orm: Orm) {}

  /**
   * A run and its tests in one statement: one round trip and one snapshot, so the counts agree with
   * the tests without a transaction. The tests come back as a JSON array (timestamps in ISO form,
   * which dbDate reads like the text form).
   */
  async getRun(projectId: string, runId: string): Promise<RunWithTests | undefined> {
    const rows = await this.orm.em.fork().execute<(RunRow & { tests: TestRow[] })[]>(
      `select ${runColumns},
         coalesce((select json_agg(t order by t.position) from (select ${testColumns}, ${testArtifactsColumn}, ${testHealthColumns} from runs.test_results t where t.run_id = r.id) t), '[]') as tests
       from runs.runs r where r.id = ? and r.project_id = ? and r.charge_state = 'charged'`,
      [runId, projectId],
    );
    const found = rows[0];
    if (!found) return undefined;
    const { tests, ...run } = found;
    return { run, tests };
  }

  /**
   * Finished runs after a cursor in the order they finished, with their tests, each finished at
   * least `finishedRunsSettleMs` ago. finished_at travels as text at full precision (microseconds,
   * UTC), as page tokens' created_at does.
   */
  async listFinished(
    after: FinishedCursor | undefined,
    limit: number,
  ): Promise<(RunWithTests & { cursor: FinishedCursor })[]> {
    const rows = await this.orm.em.fork().execute<(RunRow & { tests: TestRow[]; finished_key: string })[]>(
      `select ${runColumns},
         to_char(r.finished_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as finished_key,
         coalesce((select json_agg(t order by t.position) from (select ${testColumns}, ${testArtifactsColumn}, ${testHealthColumns} from runs.test_results t where t.run_id = r.id) t), '[]') as tests
       from runs.runs r
       where r.finished_at is not null and r.charge_state = 'charged'
         and r.finished_at < now() - make_interval(secs => ?)
         and (?::timestamptz is null or (r.finished_at, r.id) > (?::timestamptz, ?))
       order by r.finished_at, r.id
       limit ?`,
      [
        finishedRunsSettleMs / 1000,
        after?.finishedAt ?? null,
        after?.finishedAt ?? null,
        after?.id ?? "",
        limit,
      ],
    );
    return rows.map(({ tests, finished_key, ...run }) => ({
      run,
      tests,
      cursor: { finishedAt: finished_key, id: run.id },
    }));
  }

  /**
   * A run's own row and only its tests changed after `version` (their version above it), in one
   * statement: WatchRun's read after a change, whose size depends on the change, not on the run.
   * Undefined when the run is not there (or not charged).
   */
  async getRunChanges(runId: string, version: number): Promise<RunWithTests | undefined> {
    const rows = await this.orm.em.fork().execute<(RunRow & { tests: TestRow[] })[]>(
      `select ${runColumns},
         coalesce((select json_agg(t order by t.position) from (select ${testColumns}, ${testArtifactsColumn}, ${testHealthColumns} from runs.test_results t where t.run_id = r.id and t.version > ?) t), '[]') as tests
       from runs.runs r where r.id = ? and r.charge_state = 'charged'`,
      [version, runId],
    );
    const found = rows[0];
    if (!found) return undefined;
    const { tests, ...run } = found;
    return { run, tests };
  }

  /**
   * A project's runs matching `filter`, newest first (created_at, then id, descending), after the
   * page end a token carries; `next` is the token of the following page, only when a matching run
   * older than this page's last exists (one more row than the limit is read to know).
   */
  async listRuns(
    projectId: string,
    filter: RunFilter,
    after: PageEnd | undefined,
    limit: number,
  ): Promise<{ runs: RunRow[]; next: string }> {
    const where = ["r.project_id = ?", "r.charge_state = 'charged'"];
    const params: unknown[] = [projectId];
    if (filter.statuses.length > 0) {
      where.push(`r.status in (${filter.statuses.map(() => "?").join(", ")})`);
      params.push(...filter.statuses);
    }
    if (filter.testPlanId) {
      where.push("r.test_plan_id = ?");
      params.push(filter.testPlanId);
    }
    if (filter.environmentId) {
      where.push("r.environment_id = ?");
      params.push(filter.environmentId);
    }
    if (after) {
      where.push("(r.created_at, r.id) < (?::timestamptz, ?)");
      params.push(after.createdAt, after.id);
    }
    const rows = await this.orm.em.fork().execute<(RunRow & { page_created_at: string })[]>(
      `select ${runColumns},
         to_char(r.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as page_created_at
       from runs.runs r where ${where.join(" and ")}
       order by r.created_at desc, r.id desc limit ?`,
      [...params, limit + 1],
    );
    const runs = rows.slice(0, limit);
    const last = runs.at(-1);
    const next =
      rows.length > limit && last ? encodePageToken({ createdAt: last.page_created_at, id: last.id }) : "";
    return { runs, next };
  }

  /** A test of a run of the project; `run: false` when the run is not there, `test` undefined when the test is not. */
  async getTestResult(
    projectId: string,
    runId: string,
    testResultId: string,
  ): Promise<{ run: boolean; test?: TestRow }> {
    const rows = await this.orm.em.fork().execute<(TestRow & { found_run: string })[]>(
      `select r.id as found_run, ${testColumns}, ${testArtifactsColumn}, ${testHealthColumns}
       from runs.runs r left join runs.test_results t on t.run_id = r.id and t.id = ?
       where r.id = ? and r.project_id = ? and r.charge_state = 'charged'`,
      [testResultId, runId, projectId],
    );
    const row = rows[0];
    if (!row) return { run: false };
    return { run: true, test: row.id === null ? undefined : row };
  }
}
