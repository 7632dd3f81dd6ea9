// Databases that start migrated. A service's `migrate` command is a process of its own (most of a
// second each): a suite that starts five services would spend seconds before its first test on
// migrations that every suite of the run applies alike. They are applied once per test process and
// set of services, into a template database, and each suite's database is a copy of it (CREATE
// DATABASE … TEMPLATE: some tens of milliseconds). The migrations run as the deploy runs them:
// through each service's own `migrate` command.
import { randomBytes } from "node:crypto";
import { runServiceCommand } from "./process.js";
import { createTestDatabase } from "./servers.js";
import { testTokens } from "./tokens.js";

const templates = new Map<string, Promise<string>>();

/**
 * A fresh database on the test run's PostgreSQL (or the server of `baseUrl`) with the migrations of
 * `services` applied, in that order; its URL.
 */
export async function createMigratedTestDatabase(
  services: readonly string[],
  baseUrl = String(process.env.DATABASE_URL),
): Promise<string> {
  const key = `${services.join(",")} ${baseUrl}`;
  let template = templates.get(key);
  if (!template) {
    template = migratedTemplate(services, baseUrl);
    templates.set(key, template);
    // A failed migration is reported to the suite that asked; the next one tries again.
    template.catch(() => templates.delete(key));
  }
  return createTestDatabase(baseUrl, undefined, await template);
}

async function migratedTemplate(services: readonly string[], baseUrl: string): Promise<string> {
  const name = `template_${randomBytes(6).toString("hex")}`;
  const url = await createTestDatabase(baseUrl, name);
  // What the services' configurations require to start; `migrate` uses none of it but the database.
  const env = {
    ...testTokens(),
    DATABASE_URL: url,
    REDIS_URL: String(process.env.REDIS_URL ?? "redis://127.0.0.1:6379"),
    VARIABLES_KEY: randomBytes(32).toString("base64"),
    WEBHOOK_SECRETS_KEY: randomBytes(32).toString("base64"),
  };
  for (const service of services) await runServiceCommand(service, ["migrate"], env);
  return name;
}
