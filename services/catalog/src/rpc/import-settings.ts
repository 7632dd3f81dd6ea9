import { type ImportContentRequest, ItemOutcome } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { newId } from "@testrun/kit";
import type { Violations } from "../errors.js";
import type { EnvironmentRow } from "../rows.js";
import { environmentColumns } from "../rows.js";
import { type Sql, textArray } from "../sql.js";
import { checkBaseUrl, checkName, checkVariableName } from "../validate.js";
import { clearDefault } from "./environments.js";
import { decide, hasProblem, type Item, item, type Keyed, lowerKeys } from "./import-items.js";

// ImportContent's environments and variables (docs/runs.md, "Content documents"): what a project
// needs beside its tests to run them. Both are matched by name only, as the document carries no ids
// of theirs. An environment is created or changed like the document's; a variable (a name: a
// document never carries a value) is created without a value when the project has none of that
// name, and an existing one is never touched.

/** The most environments and variable names one document holds. */
export const maxDocumentEnvironments = 100;
export const maxDocumentVariables = 500;

export interface EnvironmentFields {
  name: string;
  baseUrl: string;
  isDefault: boolean;
}
export type EnvironmentItem = Item<EnvironmentFields>;
export type VariableItem = Item<{ name: string }>;

/** The request's environments, each checked with CreateEnvironment's rules; one default at most. */
export function checkEnvironments(req: ImportContentRequest, violations: Violations): EnvironmentItem[] {
  let firstDefault: string | undefined;
  return req.environments.map((given, index) => {
    const field = `environments[${index}]`;
    const path = field;
    const fields = {
      name: checkName(given.name, `${field}.name`, violations),
      baseUrl: checkBaseUrl(given.baseUrl, `${field}.base_url`, violations),
      isDefault: given.isDefault,
    };
    if (given.isDefault && firstDefault !== undefined)
      violations.add(
        `${field}.is_default`,
        `${firstDefault} is the default already: a project has one default environment`,
      );
    if (given.isDefault) firstDefault ??= path;
    return item(field, path, undefined, fields);
  });
}

/** The request's variable names, each checked with CreateVariable's rule, none twice (ignoring case). */
export function checkVariables(req: ImportContentRequest, violations: Violations): VariableItem[] {
  const seen = new Map<string, string>();
  return req.variables.map((given, index) => {
    const field = `variables[${index}]`;
    const name = checkVariableName(given, field, violations);
    const earlier = seen.get(name.toLowerCase());
    if (earlier !== undefined && !hasProblem(violations, field))
      violations.add(field, `repeats ${earlier} (variable names are compared ignoring case)`);
    seen.set(name.toLowerCase(), earlier ?? field);
    return item(field, field, undefined, { name });
  });
}

/**
 * Matches the document's environments to the project's by name (setting `match`, `outcome`,
 * `changed`); adds a violation for a name several of the project's environments share, or another
 * environment of the document has. Locks the matched rows when the import is to be written.
 */
export async function matchEnvironments(
  sql: Sql,
  projectId: string,
  environments: EnvironmentItem[],
  violations: Violations,
  lock: boolean,
): Promise<void> {
  if (environments.length === 0) return;
  const keys = await lowerKeys(
    sql,
    environments.map((e) => e.fields.name),
  );
  const rows = await sql.all<Keyed<EnvironmentRow>>(
    `select ${environmentColumns}, lower(e.name) as name_key from catalog.environments e
     where e.project_id = ? and lower(e.name) = any(?::text[]) order by e.created_at, e.id${lock ? " for update" : ""}`,
    [projectId, textArray(keys)],
  );
  environments.forEach((entry, index) => {
    const key = keys[index] ?? "";
    if (!hasProblem(violations, `${entry.field}.name`)) {
      const twin = environments.findIndex((_, at) => at !== index && keys[at] === key);
      const named = rows.filter((row) => row.name_key === key);
      if (twin >= 0)
        violations.add(
          `${entry.field}.name`,
          `${environments[twin]?.path} has the same name: environments are matched by name, so each needs a name of its own`,
        );
      else if (named.length > 1)
        violations.add(
          `${entry.field}.name`,
          `${named.length} environments of the project have this name (${named.map((row) => row.id).join(", ")}): environments are matched by name, so rename all but one of them first`,
        );
      else entry.match = named[0]?.id;
    }
    const row = rows.find((r) => r.id === entry.match);
    decide(entry, violations, row && changedEnvironmentFields(entry.fields, row));
  });
}

function changedEnvironmentFields(fields: EnvironmentFields, row: EnvironmentRow): string[] {
  return [
    fields.name !== row.name && "name",
    fields.baseUrl !== row.base_url && "baseUrl",
    fields.isDefault !== row.is_default && "isDefault",
  ].filter((field) => field !== false);
}

/**
 * Matches the document's variables to the project's by name, ignoring case: UNCHANGED when it has
 * one (left as it is, its value too), CREATED otherwise. Returns the names of the project's
 * variables without a value as the import leaves them: those it has, then those to create.
 */
export async function matchVariables(
  sql: Sql,
  projectId: string,
  variables: VariableItem[],
  violations: Violations,
  lock: boolean,
): Promise<string[]> {
  const keys = await lowerKeys(
    sql,
    variables.map((v) => v.fields.name),
  );
  const rows = await sql.all<{ id: string; name_key: string; has_value: boolean; name: string }>(
    `select v.id, v.name, lower(v.name) as name_key, v.value_ciphertext is not null as has_value
     from catalog.variables v where v.project_id = ? and (lower(v.name) = any(?::text[]) or v.value_ciphertext is null)
     order by v.created_at, v.id${lock ? " for update" : ""}`,
    [projectId, textArray(keys)],
  );
  variables.forEach((entry, index) => {
    if (hasProblem(violations, entry.field)) return;
    entry.match = rows.find((row) => row.name_key === keys[index])?.id;
    decide(entry, violations, entry.match === undefined ? undefined : []);
  });
  return [
    ...rows.filter((row) => !row.has_value).map((row) => row.name),
    ...variables.filter((v) => v.outcome === ItemOutcome.CREATED).map((v) => v.fields.name),
  ];
}

/** Writes the environments and variables decided on, in the import's transaction. */
export async function applySettings(
  sql: Sql,
  projectId: string,
  environments: EnvironmentItem[],
  variables: VariableItem[],
): Promise<void> {
  const now = new Date();
  // The default moves: the previous one stops being it first (one default per project).
  const movesDefault = environments.some(
    (e) =>
      e.fields.isDefault &&
      (e.outcome === ItemOutcome.CREATED ||
        (e.outcome === ItemOutcome.CHANGED && e.changed.includes("isDefault"))),
  );
  if (movesDefault) await clearDefault(sql, projectId, now);
  for (const environment of environments) {
    const { name, baseUrl, isDefault } = environment.fields;
    if (environment.outcome === ItemOutcome.CREATED) {
      environment.match = newId("env");
      await sql.all(
        `insert into catalog.environments (id, project_id, name, base_url, is_default, created_at, updated_at)
         values (?, ?, ?, ?, ?, ?, ?)`,
        [environment.match, projectId, name, baseUrl, isDefault, now, now],
      );
    } else if (environment.outcome === ItemOutcome.CHANGED && environment.match)
      await sql.all(
        "update catalog.environments set name = ?, base_url = ?, is_default = ?, updated_at = ? where id = ?",
        [name, baseUrl, isDefault, now, environment.match],
      );
  }
  for (const variable of variables) {
    if (variable.outcome !== ItemOutcome.CREATED) continue;
    // No value: nothing to seal, so no VARIABLES_KEY is needed. One made meanwhile by
    // CreateVariable (not held back by the import's lock) is taken as the project's.
    const [row] = await sql.all<{ id: string }>(
      `insert into catalog.variables (id, project_id, name, created_at, updated_at) values (?, ?, ?, ?, ?)
       on conflict do nothing returning id`,
      [newId("var"), projectId, variable.fields.name, now, now],
    );
    variable.match =
      row?.id ??
      (
        await sql.one<{ id: string }>(
          "select id from catalog.variables where project_id = ? and lower(name) = lower(?)",
          [projectId, variable.fields.name],
        )
      )?.id;
  }
}
