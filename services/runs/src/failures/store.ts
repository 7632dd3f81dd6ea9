// Failure groups' reads (the trigger of Migration20261128220000_failure_groups writes them) and
// the base run a comparison defaults to.
import type { Orm } from "@testrun/kit";
import { textArray } from "../store/claims.js";
import { baseRunSelect } from "./base.js";
import type { FailureGroupRow, GroupCaseRow, GroupState, OccurrenceRow } from "./render.js";

/** The most cases a group's answer lists. */
export const maxGroupCases = 500;

export class FailureStore {
  constructor(private readonly orm: Orm) {}

  /** A project's groups in `states`, by impact, after `offset`; `limit + 1` read to know whether more follow. */
  list(projectId: string, states: GroupState[], offset: number, limit: number) {
    return this.orm.em.fork().execute<FailureGroupRow[]>(
      `select g.* from runs.failure_groups g where g.project_id = ? and g.state = any(?::text[])
       order by g.cases_affected desc, g.occurrences desc, g.last_seen_at desc, g.id offset ? limit ?`,
      [projectId, textArray(states), offset, limit + 1],
    );
  }

  async get(projectId: string, groupId: string): Promise<FailureGroupRow | undefined> {
    const rows = await this.orm.em
      .fork()
      .execute<FailureGroupRow[]>(
        "select g.* from runs.failure_groups g where g.project_id = ? and g.id = ?",
        [projectId, groupId],
      );
    return rows[0];
  }

  /** A group's occurrences, newest first, after a page end (at, id). */
  occurrences(groupId: string, after: { createdAt: string; id: string } | undefined, limit: number) {
    return this.orm.em.fork().execute<OccurrenceRow[]>(
      `select o.*, o.id::text as id, to_char(o.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as page_at
       from runs.failure_occurrences o
       where o.group_id = ? and (?::timestamptz is null or (o.at, o.id) < (?::timestamptz, ?::bigint))
       order by o.at desc, o.id desc limit ?`,
      [groupId, after?.createdAt ?? null, after?.createdAt ?? null, after?.id ?? "0", limit + 1],
    );
  }

  /** A group's cases (one row per case, its environments together), the most occurrences first. */
  cases(groupId: string) {
    return this.orm.em.fork().execute<GroupCaseRow[]>(
      `select test_case_id, max(name) as name, sum(occurrences)::int as occurrences, max(last_seen_at) as last_seen_at,
         bool_or(open) as open
       from runs.failure_group_cases where group_id = ? group by test_case_id
       order by sum(occurrences) desc, test_case_id limit ${maxGroupCases}`,
      [groupId],
    );
  }

  /** The base run of `runId` by CompareRuns' default rule, if any. */
  async baseOf(runId: string): Promise<string | undefined> {
    const rows = await this.orm.em.fork().execute<{ id: string }[]>(baseRunSelect, [runId]);
    return rows[0]?.id;
  }

  /** The names of the variables when each run started (null for runs started before they were kept). */
  async variableNames(runIds: string[]): Promise<Map<string, string[] | null>> {
    const rows = await this.orm.em
      .fork()
      .execute<{ id: string; variable_names: string[] | null }[]>(
        "select id, variable_names from runs.runs where id = any(?::text[])",
        [textArray(runIds)],
      );
    return new Map(rows.map((row) => [row.id, row.variable_names]));
  }
}
