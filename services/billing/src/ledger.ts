import type { EntityManager } from "@mikro-orm/postgresql";
import { type DbTimestamp, dbDate, newId, type Orm } from "@testrun/kit";

export type EntryKind = "grant" | "charge" | "refund";

/** A ledger row as the service returns it. */
export interface Entry {
  id: string;
  projectId: string;
  kind: EntryKind;
  amount: number;
  runId: string | null;
  reason: string;
  idempotencyKey: string | null;
  createdAt: Date;
  balanceAfter: number;
}

/** Outcome of a write: the entry (the original one when the write had already happened) and the balance. */
export type Written =
  | { kind: "written" | "repeated"; entry: Entry; balance: number }
  | { kind: "insufficient"; available: number }
  | { kind: "conflict"; entry: Entry }
  /** No charge to refund; the run is now closed to charges (see `refund`). */
  | { kind: "not_charged" }
  | { kind: "over_refund"; charged: number }
  /** A charge of a run that was refunded before it was ever charged: refused. */
  | { kind: "voided" };

interface Row {
  id: string;
  project_id: string;
  kind: EntryKind;
  amount: string;
  run_id: string | null;
  reason: string;
  idempotency_key: string | null;
  created_at: DbTimestamp;
  balance_after: string;
}

const toEntry = (row: Row): Entry => ({
  id: row.id,
  projectId: row.project_id,
  kind: row.kind,
  amount: Number(row.amount),
  runId: row.run_id,
  reason: row.reason,
  idempotencyKey: row.idempotency_key,
  createdAt: dbDate(row.created_at),
  balanceAfter: Number(row.balance_after),
});

const entryColumns =
  "id, project_id, kind, amount, run_id, reason, idempotency_key, created_at, balance_after";

/**
 * The credit ledger of every project. The balance row is what concurrent writers serialise on: a
 * charge is one conditional UPDATE (`balance >= n`), so two charges can never spend more than the
 * balance, and each write adds its ledger row in the same transaction, so the balance always
 * equals the sum of the ledger. Unique keys on the ledger make every write idempotent.
 */
export class Ledger {
  constructor(private readonly orm: Orm) {}

  private transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    return this.orm.em.fork().transactional(work);
  }

  async balance(projectId: string): Promise<number> {
    const rows = await this.orm.em
      .fork()
      .execute<{ balance: string }[]>("select balance from billing.balances where project_id = ?", [
        projectId,
      ]);
    return Number(rows[0]?.balance ?? 0);
  }

  grant(projectId: string, amount: number, reason: string, idempotencyKey: string): Promise<Written> {
    return this.transaction(async (em) => {
      await em.execute("select pg_advisory_xact_lock(hashtext(?))", [`grant:${projectId}:${idempotencyKey}`]);
      const previous = await this.findOne(em, "project_id = ? and idempotency_key = ?", [
        projectId,
        idempotencyKey,
      ]);
      if (previous) return this.repeatOrConflict(em, previous, amount);
      const balance = await this.add(em, projectId, amount);
      const entry = await this.insert(
        em,
        { projectId, kind: "grant", amount, runId: null, reason, idempotencyKey },
        balance,
      );
      return { kind: "written", entry, balance };
    });
  }

  charge(projectId: string, runId: string, amount: number, reason: string): Promise<Written> {
    return this.transaction(async (em) => {
      // Taken first, so a concurrent retry of the same run waits here and then sees this charge.
      await em.execute("select pg_advisory_xact_lock(hashtext(?))", [`charge:${runId}`]);
      // After the lock (its own statement, so that what follows sees a retry's committed charge):
      // the run's charge if it has one and whether it was voided, in one round trip.
      const [state] = await em.execute<(Partial<Row> & { voided: boolean })[]>(
        `select e.*, exists (select 1 from billing.voided_runs where run_id = ?) as voided
         from (select 1) as one
         left join (select ${entryColumns} from billing.ledger_entries where run_id = ? and kind = 'charge') e on true`,
        [runId, runId],
      );
      if (state?.id) {
        const previous = toEntry(state as Row);
        if (previous.projectId !== projectId) return { kind: "conflict", entry: previous };
        return this.repeatOrConflict(em, previous, -amount);
      }
      if (state?.voided) return { kind: "voided" };
      // The conditional spend and its ledger row in one statement: no row when the balance is short.
      const written = await em.execute<Row[]>(
        `with spent as (
           update billing.balances set balance = balance - ?, updated_at = now()
           where project_id = ? and balance >= ? returning balance)
         insert into billing.ledger_entries (id, project_id, kind, amount, run_id, reason, idempotency_key, balance_after, created_at)
         select ?, ?, 'charge', ?, ?, ?, null, spent.balance, now() from spent
         returning ${entryColumns}`,
        [amount, projectId, amount, newId("led"), projectId, -amount, runId, reason],
      );
      if (!written[0]) return { kind: "insufficient", available: await this.balanceIn(em, projectId) };
      const entry = toEntry(written[0]);
      return { kind: "written", entry, balance: entry.balanceAfter };
    });
  }

  /**
   * Gives back (part of) a run's charge, once. A refund of a run never charged closes the run to
   * charges instead: the runs service asks for it when it gives up a start whose charge it has not
   * seen, and a charge of that run still on its way must then be refused, not kept. Both happen
   * under the run's lock, so whichever comes first decides: refunded charge or refused charge.
   */
  refund(projectId: string, runId: string, amount: number, reason: string): Promise<Written> {
    return this.transaction(async (em) => {
      await em.execute("select pg_advisory_xact_lock(hashtext(?))", [`charge:${runId}`]);
      const charge = await this.findOne(em, "run_id = ? and kind = 'charge'", [runId]);
      if (!charge) {
        await em.execute(
          `insert into billing.voided_runs (run_id, project_id, reason, created_at) values (?, ?, ?, now())
           on conflict (run_id) do nothing`,
          [runId, projectId, reason],
        );
        return { kind: "not_charged" };
      }
      // Charged in another project: nothing of this project's to give back.
      if (charge.projectId !== projectId) return { kind: "not_charged" };
      const previous = await this.findOne(em, "run_id = ? and kind = 'refund'", [runId]);
      if (previous) return this.repeatOrConflict(em, previous, amount);
      if (amount > -charge.amount) return { kind: "over_refund", charged: -charge.amount };
      const balance = await this.add(em, projectId, amount);
      const entry = await this.insert(
        em,
        { projectId, kind: "refund", amount, runId, reason, idempotencyKey: null },
        balance,
      );
      return { kind: "written", entry, balance };
    });
  }

  /** A page of a project's entries, newest first; `before` is the id the previous page ended with. */
  async list(projectId: string, limit: number, before?: string, runId?: string): Promise<Entry[]> {
    const where = ["project_id = ?"];
    const params: unknown[] = [projectId];
    if (before) {
      where.push("id < ?");
      params.push(before);
    }
    if (runId) {
      where.push("run_id = ?");
      params.push(runId);
    }
    const rows = await this.orm.em
      .fork()
      .execute<Row[]>(
        `select ${entryColumns} from billing.ledger_entries where ${where.join(" and ")} order by id desc limit ?`,
        [...params, limit],
      );
    return rows.map(toEntry);
  }

  private async add(em: EntityManager, projectId: string, amount: number): Promise<number> {
    const rows = await em.execute<{ balance: string }[]>(
      `insert into billing.balances as b (project_id, balance, updated_at) values (?, ?, now())
       on conflict (project_id) do update set balance = b.balance + excluded.balance, updated_at = now()
       returning balance`,
      [projectId, amount],
    );
    return Number(rows[0]?.balance);
  }

  private async balanceIn(em: EntityManager, projectId: string): Promise<number> {
    const rows = await em.execute<{ balance: string }[]>(
      "select balance from billing.balances where project_id = ?",
      [projectId],
    );
    return Number(rows[0]?.balance ?? 0);
  }

  private async findOne(em: EntityManager, where: string, params: unknown[]): Promise<Entry | undefined> {
    const rows = await em.execute<Row[]>(
      `select ${entryColumns} from billing.ledger_entries where ${where}`,
      params,
    );
    return rows[0] ? toEntry(rows[0]) : undefined;
  }

  private async insert(
    em: EntityManager,
    entry: Omit<Entry, "id" | "createdAt" | "balanceAfter">,
    balanceAfter: number,
  ): Promise<Entry> {
    const rows = await em.execute<Row[]>(
      `insert into billing.ledger_entries (id, project_id, kind, amount, run_id, reason, idempotency_key, balance_after, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, now()) returning ${entryColumns}`,
      [
        newId("led"),
        entry.projectId,
        entry.kind,
        entry.amount,
        entry.runId,
        entry.reason,
        entry.idempotencyKey,
        balanceAfter,
      ],
    );
    return toEntry(rows[0] as Row);
  }

  private async repeatOrConflict(em: EntityManager, previous: Entry, amount: number): Promise<Written> {
    if (previous.amount !== amount) return { kind: "conflict", entry: previous };
    return { kind: "repeated", entry: previous, balance: await this.balanceIn(em, previous.projectId) };
  }
}
