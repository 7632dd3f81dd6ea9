import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import { dbDate, type Orm } from "@testrun/kit";

/**
 * Raw SQL on the catalog schema (tables are always qualified: `catalog.x`). Parameters are `?`;
 * MikroORM quotes them into the statement, so arrays go through `textArray` and a `?::text[]` cast.
 */
export interface Sql {
  all<T>(query: string, params?: readonly unknown[]): Promise<T[]>;
  one<T>(query: string, params?: readonly unknown[]): Promise<T | undefined>;
}

/**
 * MikroORM hands timestamptz columns back as text. Every timestamp column of the catalog is named
 * `…_at`, so those become Dates here and the rest of the code deals in Dates only.
 */
export function withDates<T>(rows: Record<string, unknown>[]): T[] {
  for (const row of rows) {
    for (const [column, value] of Object.entries(row)) {
      if (column.endsWith("_at") && typeof value === "string") row[column] = dbDate(value);
    }
  }
  return rows as T[];
}

const over = (em: EntityManager): Sql => {
  const all = async <T>(query: string, params: readonly unknown[] = []) =>
    withDates<T>(await em.execute<Record<string, unknown>[]>(query, [...params]));
  return {
    all,
    one: async <T>(query: string, params?: readonly unknown[]) => (await all<T>(query, params))[0],
  };
};

/** The catalog's database: reads on a fresh connection, writes in one transaction each. */
export class Database {
  constructor(private readonly orm: Orm) {}

  read<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    return work(over(this.orm.em.fork()));
  }

  /** Runs `work` in a transaction: everything it wrote is committed together, or nothing is. */
  write<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    return this.orm.em.fork().transactional((em) => work(over(em)));
  }
}

/** A PostgreSQL array literal of texts, for a `?::text[]` parameter. */
export function textArray(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`).join(",")}}`;
}

/** Whether an error is a violation of the named unique index (a name or email already taken). */
export function violatesUnique(error: unknown, index: string): boolean {
  return (
    error instanceof UniqueConstraintViolationException &&
    (error as unknown as { constraint?: string }).constraint === index
  );
}
