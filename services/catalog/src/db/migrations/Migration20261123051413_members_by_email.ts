import { Migration } from "@mikro-orm/migrations";

export class Migration20261123051413_members_by_email extends Migration {
  override name = "Migration20261123051413_members_by_email";

  override up(): void | Promise<void> {
    this.addSql(
      `create index "members_active_email_index" on catalog.members (lower("email")) where "removed_at" is null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "catalog"."members_active_email_index";`);
  }
}
