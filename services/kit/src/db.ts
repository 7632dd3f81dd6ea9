import type { Constructor, EntitySchema, MikroORM } from "@mikro-orm/core";
import type { Migration } from "@mikro-orm/migrations";
import type { PostgreSqlDriver } from "@mikro-orm/postgresql";

export type Orm = MikroORM<PostgreSqlDriver>;

/** How a service's data lives in the shared database: its own schema, its entities, its migrations. */
export interface DatabaseSpec {
  /** The PostgreSQL schema the service owns; no other service reads or writes it. */
  schema: string;
  // biome-ignore lint/suspicious/noExplicitAny: entity schemas of any shape.
  entities: EntitySchema<any, any>[];
  /** Every migration, oldest first; listed in code so compiled builds need no file discovery. */
  migrations: { name: string; class: Constructor<Migration> }[];
}

/**
 * Connects to PostgreSQL with the service's schema as the default one. Does not touch the schema's
 * tables: migrations are applied by `migrateDatabase`, run as a separate step before deploys.
 */
export async function openDatabase(url: string, spec: DatabaseSpec, poolMax = 10): Promise<Orm> {
  // Loaded here rather than with the kit: services without a database (the gateway, executors)
  // then never load MikroORM, some 40 MiB of resident memory.
  const [{ MikroORM }, { Migrator }, { PostgreSqlDriver }] = await Promise.all([
    import("@mikro-orm/core"),
    import("@mikro-orm/migrations"),
    import("@mikro-orm/postgresql"),
  ]);
  const orm = new MikroORM({
    driver: PostgreSqlDriver,
    clientUrl: url,
    schema: spec.schema,
    entities: spec.entities,
    extensions: [Migrator],
    pool: { min: 0, max: poolMax },
    migrations: {
      migrationsList: spec.migrations,
      schema: spec.schema,
      tableName: "mikro_orm_migrations",
      snapshot: false,
      snapshotOnMigrate: false,
      silent: true,
    },
    // The driver's own logging would print bound parameters, which can hold secrets.
    debug: false,
    ensureDatabase: false,
    allowGlobalContext: false,
  });
  return orm as unknown as Orm;
}

/** Applies every pending migration of the service's schema, creating the schema if need be. */
export async function migrateDatabase(orm: Orm, spec: DatabaseSpec): Promise<string[]> {
  await orm.em.getConnection().execute(`create schema if not exists "${spec.schema}"`);
  const applied = await orm.migrator.up();
  return applied.map((m) => m.name);
}

/**
 * A timestamptz column as a raw query (`em.execute`) returns it: MikroORM keeps PostgreSQL's text
 * form (`2026-11-22 06:13:34.016347+00`, microseconds included, which a Date cannot hold); entities
 * hold Dates. Code that needs the microseconds (the runs list's page ends) keeps the text.
 */
export type DbTimestamp = Date | string;

/**
 * A timestamptz as a Date (to the millisecond). The text is made ISO 8601 first (`T`, `+00:00`):
 * Date's fallback parser for other forms is the engine's own and reads years below 100 as 19xx/20xx.
 */
export function dbDate(value: DbTimestamp): Date {
  if (value instanceof Date) return value;
  return new Date(value.replace(" ", "T").replace(/([+-]\d\d)$/, "$1:00"));
}

/** dbDate for a column that may be null. */
export const dbDateOrNull = (value: DbTimestamp | null): Date | null =>
  value === null ? null : dbDate(value);
