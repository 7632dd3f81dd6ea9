import type { Orm } from "@testrun/kit";
import type { ArtifactContents } from "./contents.js";

/**
 * Artifact bytes in the runs schema (table artifact_contents): the default store, which needs
 * nothing beyond the database the service already has. PostgreSQL keeps large values out of line
 * (TOAST), so the table's size is the artifacts' size, bounded by the caps and the retention.
 */
export class PostgresContents implements ArtifactContents {
  readonly backend = "postgres";

  constructor(private readonly orm: Orm) {}

  async put(key: string, content: Uint8Array): Promise<void> {
    await this.orm.em.fork().execute(
      `insert into runs.artifact_contents (key, content) values (?, ?)
         on conflict (key) do update set content = excluded.content`,
      [key, Buffer.from(content.buffer, content.byteOffset, content.byteLength)],
    );
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    const rows = await this.orm.em
      .fork()
      .execute<{ content: Buffer }[]>("select content from runs.artifact_contents where key = ?", [key]);
    return rows[0]?.content;
  }

  async delete(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    // One JSON array parameter: the driver would expand a JS array into a parameter list.
    await this.orm.em
      .fork()
      .execute(
        "delete from runs.artifact_contents where key in (select jsonb_array_elements_text(?::jsonb))",
        [JSON.stringify(keys)],
      );
  }

  close(): void {
    // The database connections are the service's, closed with it.
  }
}
