import { Migration } from "@mikro-orm/migrations";

/**
 * A failure group's message leaves out the executor's own prefix of a summary, `step 2 "name": `
 * (or a spec's `test 2 "name" failed: `): the group already names its step's kind, action and
 * target, and the step's name (a label people choose per test case) was masked to `{s}` anyway,
 * so the message now reads as what went wrong: `expected status {n}, got {n}`. Groups recorded
 * before keep their message; a later occurrence of their failure opens a group of the new form.
 */
export class Migration20261128223000_failure_message extends Migration {
  override name = "Migration20261128223000_failure_message";

  override async up(): Promise<void> {
    this.addSql(`
      create or replace function runs.masked_message(p text) returns text language sql immutable as $$
        select regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
          regexp_replace(coalesce(p, ''), '^(step \\d+ "([^"\\\\]|\\\\.)*": |test \\d+ "([^"\\\\]|\\\\.)*" failed: )', ''),
          '"[^"]*"|''[^'']*''|“[^”]*”', '{s}', 'g'),
          '\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:?\\d{2})?)?', '{time}', 'g'),
          '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}', '{id}', 'g'),
          '\\m[a-z]{2,4}_[0-9a-z]{20,}\\M', '{id}', 'g'),
          '\\m[0-9a-fA-F]{16,}\\M', '{id}', 'g'),
          '\\d+(\\.\\d+)?', '{n}', 'g')
      $$;`);
  }

  override async down(): Promise<void> {
    this.addSql(`
      create or replace function runs.masked_message(p text) returns text language sql immutable as $$
        select regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
          coalesce(p, ''),
          '"[^"]*"|''[^'']*''|“[^”]*”', '{s}', 'g'),
          '\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:?\\d{2})?)?', '{time}', 'g'),
          '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}', '{id}', 'g'),
          '\\m[a-z]{2,4}_[0-9a-z]{20,}\\M', '{id}', 'g'),
          '\\m[0-9a-fA-F]{16,}\\M', '{id}', 'g'),
          '\\d+(\\.\\d+)?', '{n}', 'g')
      $$;`);
  }
}
