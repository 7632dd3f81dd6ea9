// Writes the next migration of one service from the difference between its entities and the schema
// its existing migrations build. Usage: make migration SERVICE=billing [NAME=add_x]
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { migrateDatabase, openDatabase } from "@testrun/kit";
import { createTestDatabase, repoRoot, startThrowawayPostgres } from "@testrun/kit/testing";

const [service, name = "change"] = process.argv.slice(2);
if (!service) throw new Error("usage: new-migration.ts <service> [name]");
const { database } = await import(join(repoRoot, "services", service, "src", "db", "index.ts"));

const postgres = await startThrowawayPostgres();
try {
  const orm = await openDatabase(await createTestDatabase(postgres.url), database);
  await migrateDatabase(orm, database);
  const diff = await orm.migrator.create(join(repoRoot, "services", service, "src", "db", "migrations"), false, false, name);
  await orm.close();
  if (!diff.fileName) console.log(`${service}: entities and migrations agree; nothing to write`);
  else {
    console.log(`${service}: wrote ${diff.fileName}; add it to services/${service}/src/db/migrations/index.ts`);
    writeFileSync(1, `${diff.code}\n`);
  }
} finally {
  await postgres.stop();
}
