import { Migration } from "@mikro-orm/migrations";

/**
 * The catalog's outbox also tells the runs service of a deleted project, whose artifacts must go
 * (RunsService.PurgeProjectArtifacts; src/outbox.ts).
 */
export class Migration20261125043432_project_artifacts extends Migration {
  override name = "Migration20261125043432_project_artifacts";

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "catalog"."key_notifications" drop constraint "key_notifications_fields_match_kind";`,
    );
    this.addSql(`alter table "catalog"."key_notifications" drop constraint "key_notifications_kind_check";`);
    this.addSql(
      `alter table "catalog"."key_notifications" add constraint "key_notifications_fields_match_kind" check ((kind = 'disable_member_keys' and member_id is not null and lost_at is not null) or (kind in ('revoke_project_keys', 'purge_project_artifacts') and project_id is not null));`,
    );
    this.addSql(
      `alter table "catalog"."key_notifications" add constraint "key_notifications_kind_check" check ("kind" in ('disable_member_keys', 'revoke_project_keys', 'purge_project_artifacts'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`delete from "catalog"."key_notifications" where kind = 'purge_project_artifacts';`);
    this.addSql(
      `alter table "catalog"."key_notifications" drop constraint "key_notifications_fields_match_kind";`,
    );
    this.addSql(`alter table "catalog"."key_notifications" drop constraint "key_notifications_kind_check";`);
    this.addSql(
      `alter table "catalog"."key_notifications" add constraint "key_notifications_fields_match_kind" check (((kind = 'disable_member_keys'::text) AND (member_id IS NOT NULL) AND (lost_at IS NOT NULL)) OR ((kind = 'revoke_project_keys'::text) AND (project_id IS NOT NULL)));`,
    );
    this.addSql(
      `alter table "catalog"."key_notifications" add constraint "key_notifications_kind_check" check ("kind" in ('disable_member_keys', 'revoke_project_keys'));`,
    );
  }
}
