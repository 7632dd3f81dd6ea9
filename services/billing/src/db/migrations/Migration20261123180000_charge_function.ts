import { Migration } from "@mikro-orm/migrations";

/**
 * A run's charge as one function, so that a charge is one statement and one round trip instead of
 * a transaction of five (docs/development.md, "Benchmarks"). Same steps as before, in the same
 * order and under the same lock as a refund of the run (ledger.ts): each statement of a plpgsql
 * function sees what committed before it, so after the lock it sees a retry's committed charge.
 * Its `entry` is a row of billing.ledger_entries: a later change of that table's columns must
 * replace the function too (drop it first; the table then drops only with `cascade`).
 */
export class Migration20261123180000_charge_function extends Migration {
  override name = "Migration20261123180000_charge_function";

  override up(): void | Promise<void> {
    this.addSql(`
create function "billing"."charge_run"(
  p_project_id varchar, p_run_id varchar, p_amount bigint, p_reason text, p_entry_id varchar,
  out outcome text, out balance_now bigint, out entry "billing"."ledger_entries")
language plpgsql as $$
begin
  perform pg_advisory_xact_lock(hashtext('charge:' || p_run_id));
  select * into entry from billing.ledger_entries e where e.run_id = p_run_id and e.kind = 'charge';
  if found then
    outcome := 'previous';
    select b.balance into balance_now from billing.balances b where b.project_id = entry.project_id;
    return;
  end if;
  if exists (select 1 from billing.voided_runs v where v.run_id = p_run_id) then
    outcome := 'voided';
    return;
  end if;
  update billing.balances b set balance = b.balance - p_amount, updated_at = now()
    where b.project_id = p_project_id and b.balance >= p_amount
    returning b.balance into balance_now;
  if not found then
    outcome := 'insufficient';
    select b.balance into balance_now from billing.balances b where b.project_id = p_project_id;
    return;
  end if;
  insert into billing.ledger_entries (id, project_id, kind, amount, run_id, reason, idempotency_key, balance_after, created_at)
    values (p_entry_id, p_project_id, 'charge', -p_amount, p_run_id, p_reason, null, balance_now, now())
    returning * into entry;
  outcome := 'written';
end $$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function if exists "billing"."charge_run"(varchar, varchar, bigint, text, varchar);`);
  }
}
