import { Migration } from "@mikro-orm/migrations";

/**
 * Counts the NEW_PROJECT_CREDITS grants each organization's projects received, so they stop at
 * NEW_PROJECT_GRANTS_PER_ORGANIZATION (src/rpc/projects.ts). Existing organizations start at 0.
 */
export class Migration20261128124523_new_project_grants extends Migration {
  override name = "Migration20261128124523_new_project_grants";

  override up(): void | Promise<void> {
    this.addSql(`alter table "catalog"."organizations" add "new_project_grants" int not null default 0;`);
    this.addSql(
      `alter table "catalog"."organizations" add constraint "organizations_new_project_grants_not_negative" check (new_project_grants >= 0);`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(
      `alter table "catalog"."organizations" drop constraint "organizations_new_project_grants_not_negative";`,
    );
    this.addSql(`alter table "catalog"."organizations" drop column "new_project_grants";`);
  }
}
