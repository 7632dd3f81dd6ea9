/**
 * SQL: the id of run `?`'s base run, the one CompareRuns compares it with by default and whose
 * failures a finished run's new_failures are counted against: the latest finished run created
 * before it on the same environment with the same plan (for a run of no plan, the same name).
 * Indexed by environment and creation (runs_environment_created_index).
 */
export const baseRunSelect = `select b.id from runs.runs me join runs.runs b
    on b.environment_id = me.environment_id and b.project_id = me.project_id
  where me.id = ? and b.charge_state = 'charged' and b.finished_at is not null
    and (b.created_at, b.id) < (me.created_at, me.id)
    and (case when me.test_plan_id is not null then b.test_plan_id = me.test_plan_id
              else b.test_plan_id is null and b.name = me.name end)
  order by b.created_at desc, b.id desc limit 1`;
