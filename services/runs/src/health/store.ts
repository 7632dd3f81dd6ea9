// Test health's reads and writes (docs/rest-api.md, "Test health and quarantine"): a case's
// history (its test results), the health kept per case and environment (case_health, written by
// the trigger that records each result), quarantines and their events, a project's settings.
import { newId, type Orm } from "@testrun/kit";
import type { HealthState } from "../db/entities.js";
import {
  type CaseHealthRow,
  caseHealthSelect,
  defaultHealthSettings,
  lastingQuarantine,
  type QuarantineRow,
  type TestRow,
} from "../rows.js";
import { textArray } from "../store/claims.js";
import { transaction } from "../store/locking.js";

/** A state as ListTestHealth filters and orders by it: a lasting quarantine comes first. */
export type ListedState = HealthState | "quarantined";

/** ListTestHealth's order: by impact. */
const impactOrder: ListedState[] = ["quarantined", "failing", "new_failure", "flaky", "unknown", "stable"];

export interface HealthSettingsRow {
  window_results: number;
  window_days: number;
  min_results: number;
  history_retention_days: number;
}

/** One history entry: a test result with what its run says of it. */
export type HistoryRow = TestRow & {
  run_name: string;
  environment_id: string;
  test_plan_id: string | null;
  started_by_key_id: string | null;
  started_by_member_id: string | null;
  idempotency_key: string | null;
  project_id: string;
  page_finished_at: string;
};

/** Where a history page ends: the last entry's finished_at (full precision, as text) and id. */
export interface HistoryEnd {
  createdAt: string;
  id: string;
}

export class HealthStore {
  constructor(private readonly orm: Orm) {}

  /** A case's final results, newest first, after `after`; `limit + 1` read to know whether more follow. */
  history(
    projectId: string,
    testCaseId: string,
    environmentId: string | undefined,
    after: HistoryEnd | undefined,
    limit: number,
  ) {
    return this.orm.em.fork().execute<HistoryRow[]>(
      `select t.*, r.name as run_name, r.environment_id, r.test_plan_id, r.started_by_key_id, r.started_by_member_id,
         r.idempotency_key, r.project_id,
         to_char(t.finished_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as page_finished_at
       from runs.test_results t join runs.runs r on r.id = t.run_id
       where t.test_case_id = ? and t.finished_at is not null and r.project_id = ? and r.charge_state = 'charged'
         and (?::text is null or r.environment_id = ?)
         and (?::timestamptz is null or (t.finished_at, t.id) < (?::timestamptz, ?))
       order by t.finished_at desc, t.id desc limit ?`,
      [
        testCaseId,
        projectId,
        environmentId ?? null,
        environmentId ?? null,
        after?.createdAt ?? null,
        after?.createdAt ?? null,
        after?.id ?? "",
        limit + 1,
      ],
    );
  }

  /** A case's health in each environment (or one), with the quarantine lasting now. */
  async caseHealth(projectId: string, testCaseId: string, environmentId?: string) {
    const em = this.orm.em.fork();
    const rows = await em.execute<CaseHealthRow[]>(
      `${caseHealthSelect} where h.project_id = ? and h.test_case_id = ? and (?::text is null or h.environment_id = ?)
       order by h.environment_id`,
      [projectId, testCaseId, environmentId ?? null, environmentId ?? null],
    );
    return { rows, quarantine: await this.lasting(projectId, testCaseId) };
  }

  /**
   * A project's cases by impact (impactOrder, then the most failures in the window, then the latest
   * result), filtered; `offset` pages through them. Counts per state are of the filters, not paged.
   */
  async list(
    projectId: string,
    filter: { environmentId?: string; states: ListedState[]; testCaseIds: string[] },
    offset: number,
    limit: number,
  ) {
    const where = ["h.project_id = ?"];
    const params: unknown[] = [projectId];
    if (filter.environmentId) {
      where.push("h.environment_id = ?");
      params.push(filter.environmentId);
    }
    if (filter.testCaseIds.length > 0) {
      where.push("h.test_case_id = any(?::text[])");
      params.push(textArray(filter.testCaseIds));
    }
    const listed = `select h.*, row_to_json(q) as quarantine,
         case when q.id is not null then 'quarantined' else h.judged end as listed_state
       from runs.case_health h
       left join runs.quarantines q on q.project_id = h.project_id and q.test_case_id = h.test_case_id and ${lastingQuarantine}
       where ${where.join(" and ")}`;
    const stateFilter =
      filter.states.length > 0 ? `where listed_state in (${filter.states.map(() => "?").join(", ")})` : "";
    const em = this.orm.em.fork();
    const rows = await em.execute<
      (CaseHealthRow & { quarantine: QuarantineRow | null; listed_state: ListedState })[]
    >(
      `select * from (${listed}) l ${stateFilter}
       order by array_position(?::text[], listed_state), window_failures desc, last_result_at desc nulls last,
         test_case_id, environment_id
       offset ? limit ?`,
      [...params, ...filter.states, textArray(impactOrder), offset, limit + 1],
    );
    const counts = await em.execute<{ listed_state: ListedState; n: number }[]>(
      `select listed_state, count(*)::int as n from (${listed}) l group by listed_state`,
      params,
    );
    return { rows, counts };
  }

  /** Where each case's current failures began in an environment (its run), for the cases that are failing. */
  async failingSince(
    projectId: string,
    environmentId: string,
    testCaseIds: string[],
  ): Promise<Map<string, string>> {
    const rows = await this.orm.em.fork().execute<{ test_case_id: string; run: string }[]>(
      `select h.test_case_id, h.failing_since->>'run' as run from runs.case_health h
       where h.project_id = ? and h.environment_id = ? and h.test_case_id = any(?::text[]) and h.failing_since is not null`,
      [projectId, environmentId, textArray(testCaseIds)],
    );
    return new Map(rows.map((row) => [row.test_case_id, row.run]));
  }

  /** The quarantine lasting now of a case, if any. */
  async lasting(projectId: string, testCaseId: string): Promise<QuarantineRow | undefined> {
    const rows = await this.orm.em
      .fork()
      .execute<QuarantineRow[]>(
        `select q.* from runs.quarantines q where q.project_id = ? and q.test_case_id = ? and ${lastingQuarantine}`,
        [projectId, testCaseId],
      );
    return rows[0];
  }

  /** A project's quarantines (or a case's), lasting first, then ended ones newest first; at most 1,000. */
  quarantines(projectId: string, testCaseId: string | undefined, includeEnded: boolean) {
    return this.orm.em.fork().execute<QuarantineRow[]>(
      `select q.* from runs.quarantines q
       where q.project_id = ? and (?::text is null or q.test_case_id = ?) and (? or (${lastingQuarantine}))
       order by (${lastingQuarantine}) desc, q.started_at desc limit 1000`,
      [projectId, testCaseId ?? null, testCaseId ?? null, includeEnded],
    );
  }

  /**
   * Quarantines a case for `days`: a quarantine lasting (or expired but not yet ended by the
   * reconciler) is ended first, as replaced or expired. One transaction: the unique index allows one
   * open quarantine per case.
   */
  quarantine(q: {
    projectId: string;
    testCaseId: string;
    reason: string;
    days: number;
    memberId: string | null;
  }) {
    return transaction<QuarantineRow>(this.orm, async (em) => {
      await em.execute(
        `update runs.quarantines q set ended_at = least(now(), q.expires_at),
           end_kind = case when q.expires_at > now() then 'replaced' else 'expired' end
         where q.project_id = ? and q.test_case_id = ? and q.ended_at is null`,
        [q.projectId, q.testCaseId],
      );
      const [row] = await em.execute<QuarantineRow[]>(
        `insert into runs.quarantines (id, project_id, test_case_id, reason, started_at, expires_at, started_by_member_id)
         values (?, ?, ?, ?, now(), now() + ? * interval '1 day', ?) returning *`,
        [newId("qtn"), q.projectId, q.testCaseId, q.reason, q.days, q.memberId],
      );
      const started = row as QuarantineRow;
      await em.execute("insert into runs.quarantine_events (type, quarantine_id) values ('started', ?)", [
        started.id,
      ]);
      return started;
    });
  }

  /** Lifts a case's lasting quarantine; undefined when none lasted. */
  lift(projectId: string, testCaseId: string, memberId: string | null) {
    return transaction<QuarantineRow | undefined>(this.orm, async (em) => {
      const [row] = await em.execute<QuarantineRow[]>(
        `update runs.quarantines q set ended_at = now(), end_kind = 'lifted', lifted_by_member_id = ?
         where q.project_id = ? and q.test_case_id = ? and ${lastingQuarantine} returning *`,
        [memberId, projectId, testCaseId],
      );
      if (row)
        await em.execute("insert into runs.quarantine_events (type, quarantine_id) values ('lifted', ?)", [
          row.id,
        ]);
      return row;
    });
  }

  /** Ends quarantines past their expiry (the reconciler), each with its `expired` event; answers how many. */
  async expireDue(limit: number): Promise<number> {
    const rows = await this.orm.em.fork().execute<{ id: string }[]>(
      `with due as (
         select id from runs.quarantines where ended_at is null and expires_at <= now()
         order by expires_at limit ? for update skip locked),
       ended as (
         update runs.quarantines q set ended_at = q.expires_at, end_kind = 'expired' from due where q.id = due.id returning q.id),
       told as (insert into runs.quarantine_events (type, quarantine_id, at) select 'expired', id, now() from ended)
       select id from ended`,
      [limit],
    );
    return rows.length;
  }

  /** Quarantine events after `afterSeq`, in order, with the case's latest name. */
  events(afterSeq: number, limit: number) {
    return this.orm.em
      .fork()
      .execute<(QuarantineRow & { seq: string; type: string; at: string; case_name: string | null })[]>(
        `select e.seq, e.type, e.at, q.*,
         (select h.name from runs.case_health h where h.project_id = q.project_id and h.test_case_id = q.test_case_id
          order by h.updated_at desc limit 1) as case_name
       from runs.quarantine_events e join runs.quarantines q on q.id = e.quarantine_id
       where e.seq > ? order by e.seq limit ?`,
        [afterSeq, limit],
      );
  }

  async settings(projectId: string): Promise<HealthSettingsRow> {
    const rows = await this.orm.em
      .fork()
      .execute<HealthSettingsRow[]>(
        "select window_results, window_days, min_results, history_retention_days from runs.health_settings where project_id = ?",
        [projectId],
      );
    return rows[0] ?? defaultHealthSettings;
  }

  async updateSettings(projectId: string, s: HealthSettingsRow): Promise<HealthSettingsRow> {
    const [row] = await this.orm.em.fork().execute<HealthSettingsRow[]>(
      `insert into runs.health_settings (project_id, window_results, window_days, min_results, history_retention_days, updated_at)
       values (?, ?, ?, ?, ?, now())
       on conflict (project_id) do update set window_results = excluded.window_results, window_days = excluded.window_days,
         min_results = excluded.min_results, history_retention_days = excluded.history_retention_days, updated_at = now()
       returning window_results, window_days, min_results, history_retention_days`,
      [projectId, s.window_results, s.window_days, s.min_results, s.history_retention_days],
    );
    return row ?? s;
  }

  /**
   * Deletes finished runs older than their project's history retention, at most `limit` per call
   * (the reconciler), with their results; runs with artifacts not yet swept wait for the sweeper.
   * The case_health counts outlive them.
   */
  async pruneHistory(limit: number): Promise<number> {
    const rows = await this.orm.em.fork().execute<{ id: string }[]>(
      `with old as (
         select r.id from runs.runs r
         where r.finished_at is not null
           and r.finished_at < now() - coalesce((select s.history_retention_days from runs.health_settings s where s.project_id = r.project_id), ?) * interval '1 day'
           and not exists (select 1 from runs.artifacts a where a.run_id = r.id)
         order by r.finished_at limit ? for update skip locked)
       delete from runs.runs r using old where r.id = old.id returning r.id`,
      [defaultHealthSettings.history_retention_days, limit],
    );
    return rows.length;
  }
}
