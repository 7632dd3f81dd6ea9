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

  /**
   * Takes a run's credits once: under the run's lock (shared with `refund`), its earlier charge is
   * repeated or a conflict, a voided run is refused, and otherwise the balance is spent if it
   * holds enough. One statement, the function `billing.charge_run` (its migration has the steps).
   */
  async charge(projectId: string, runId: string, amount: number, reason: string): Promise<Written> {
    const rows = await this.orm.em
      .fork()
      .execute<
        ({ outcome: "previous" | "voided" | "insufficient" | "written"; balance_now: string | null } & Row)[]
      >(`select c.outcome, c.balance_now, (c.entry).* from billing.charge_run(?, ?, ?, ?, ?) c`, [
        projectId,
        runId,
        amount,
        reason,
        newId("led"),
      ]);
    const [row] = rows;
    if (!row) throw new Error("billing.charge_run answered no row");
    const balance = Number(row.balance_now ?? 0);
    switch (row.outcome) {
      case "voided":
        return { kind: "voided" };
      case "insufficient":
        return { kind: "insufficient", available: balance };
      case "written":
        return { kind: "written", entry: toEntry(row), balance };
      case "previous": {
        const previous = toEntry(row);
        if (previous.projectId !== projectId || previous.amount !== -amount)
          return { kind: "conflict", entry: previous };
        return { kind: "repeated", entry: previous, balance };
      }
    }
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
