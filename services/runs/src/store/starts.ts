import type { Orm } from "@testrun/kit";
import type { TestStepSnapshot } from "../db/entities.js";
import { lastingQuarantine } from "../rows.js";
import { textArray } from "./claims.js";

export interface NewRun {
  id: string;
  projectId: string;
  environmentId: string;
  environmentBaseUrl: string;
  testPlanId: string | null;
  name: string;
  startedByKeyId: string | null;
  startedByMemberId: string | null;
  /** StartRunRequest.record_traces. */
  recordTraces: boolean;
  /** StartRunRequest.idempotency_key; null without one. */
  idempotencyKey: string | null;
  /** The project's variables' names when it started (never values): what CompareRuns diffs. */
  variableNames: string[];
  tests: {
    id: string;
    testCaseId: string;
    testCaseVersion: number;
    name: string;
    steps: TestStepSnapshot[];
    /** SelectedTestCase.playwright as proto JSON; null for a case of steps. */
    playwright: Record<string, unknown> | null;
    /** SelectedTestCase.record_trace. */
    recordTrace: boolean;
    /** StartRunRequest.retries, else SelectedTestCase.retries. */
    retries: number;
  }[];
}

/**
 * The writes of StartRun (start.ts) and of undoing a start (credits.ts): a run is stored hidden
 * (`pending`) until billing took its credits, then made visible (`charged`), or given up
 * (`abandoned`) and removed.
 */
export class StartStore {
  constructor(private readonly orm: Orm) {}

  /**
   * Stores a run RUNNING with every test QUEUED, hidden (`pending`) until its charge is confirmed:
   * one statement (the run, then its tests through the run's CTE), so all of it is stored or none.
   */
  async insertPending(run: NewRun): Promise<void> {
    // The tests (at most 500) travel as one JSON array: the driver would expand a JS array into a
    // parameter list.
    const tests = JSON.stringify(
      run.tests.map((t, position) => ({
        id: t.id,
        test_case_id: t.testCaseId,
        test_case_version: t.testCaseVersion,
        name: t.name,
        steps: t.steps,
        playwright: t.playwright,
        record_trace: t.recordTrace,
        retries: t.retries,
        position,
      })),
    );
    await this.orm.em.fork().execute(
      `with run as (
         insert into runs.runs (id, project_id, environment_id, environment_base_url, test_plan_id, name, status,
           total_tests, credits_charged, charge_state, started_at, created_at, started_by_key_id, started_by_member_id,
           record_traces, idempotency_key, variable_names)
         values (?, ?, ?, ?, ?, ?, 'running', ?, ?, 'pending', now(), now(), ?, ?, ?, ?, ?::text[])
         returning id)
       insert into runs.test_results (id, run_id, test_case_id, test_case_version, name, position, status, steps,
         playwright, record_trace, retries, quarantined, queued_at)
       select u.id, run.id, u.test_case_id, u.test_case_version, u.name, u.position, 'queued', u.steps,
         nullif(u.playwright, 'null'::jsonb), u.record_trace,
         u.retries,
         exists (select 1 from runs.quarantines q
                 where q.project_id = ? and q.test_case_id = u.test_case_id and ${lastingQuarantine}),
         now()
       from run, jsonb_to_recordset(?::jsonb)
         as u(id text, test_case_id text, test_case_version int, name text, steps jsonb, playwright jsonb, record_trace boolean,
              retries int, position int)`,
      [
        run.id,
        run.projectId,
        run.environmentId,
        run.environmentBaseUrl,
        run.testPlanId,
        run.name,
        run.tests.length,
        run.tests.length,
        run.startedByKeyId,
        run.startedByMemberId,
        run.recordTraces,
        run.idempotencyKey,
        textArray(run.variableNames),
        run.projectId,
        tests,
      ],
    );
  }

  /**
   * The run started earlier with this idempotency key in the project, and whether its start
   * completed (charged) or is still in progress (pending); undefined when there is none.
   */
  async findByIdempotencyKey(
    projectId: string,
    key: string,
  ): Promise<{ id: string; chargeState: "pending" | "charged" } | undefined> {
    const rows = await this.orm.em.fork().execute<{ id: string; charge_state: "pending" | "charged" }[]>(
      `select id, charge_state from runs.runs
       where project_id = ? and idempotency_key = ? and charge_state <> 'abandoned'`,
      [projectId, key],
    );
    const row = rows[0];
    return row && { id: row.id, chargeState: row.charge_state };
  }

  /**
   * Makes a pending run visible once billing took its credits; false when it was abandoned
   * meanwhile. Its tests are marked published in the same statement, since the caller publishes
   * them next (a publication lost anyway is one the reconciler repeats, as when Redis loses it).
   */
  async markCharged(runId: string): Promise<boolean> {
    const rows = await this.orm.em.fork().execute<{ id: string }[]>(
      `with charged as (
         update runs.runs set charge_state = 'charged' where id = ? and charge_state = 'pending' returning id),
       published as (
         update runs.test_results set published_at = now(), publish_count = publish_count + 1
         where run_id in (select id from charged))
       select id from charged`,
      [runId],
    );
    return rows.length === 1;
  }

  /**
   * Gives up a start that did not complete: pending becomes abandoned (so a late charge confirmation
   * cannot make it visible). Answers what the run is now: abandoned (its charge, if any, is to be
   * refunded), charged (it did start after all), or gone.
   */
  async abandon(runId: string): Promise<"abandoned" | "charged" | "gone"> {
    const rows = await this.orm.em.fork().execute<{ charge_state: string }[]>(
      `with changed as (update runs.runs set charge_state = 'abandoned' where id = ? and charge_state = 'pending' returning charge_state)
       select charge_state from changed union all select charge_state from runs.runs where id = ? and charge_state <> 'pending'`,
      [runId, runId],
    );
    const state = rows[0]?.charge_state;
    return state === "charged" ? "charged" : state === "abandoned" ? "abandoned" : "gone";
  }

  /** Removes a run that never started (and was never, or no longer, charged). */
  async deleteUnstarted(runId: string): Promise<void> {
    await this.orm.em
      .fork()
      .execute("delete from runs.runs where id = ? and charge_state <> 'charged'", [runId]);
  }
}
