import { Migration } from "@mikro-orm/migrations";

/**
 * The catalog's outbox also asks the billing service for a new project's credits
 * (NEW_PROJECT_CREDITS; BillingService.GrantCredits, src/outbox.ts), and keeps how many.
 */
export class Migration20261128120312_new_project_credits extends Migration {
  override name = "Migration20261128120312_new_project_credits";

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "catalog"."key_notifications" drop constraint "key_notifications_fields_match_kind";`,
    );
    this.addSql(`alter table "catalog"."key_notifications" drop constraint "key_notifications_kind_check";`);
    this.addSql(`alter table "catalog"."key_notifications" add "credits" int null;`);
    this.addSql(
      `alter table "catalog"."key_notifications" add constraint "key_notifications_fields_match_kind" check ((kind = 'disable_member_keys' and member_id is not null and lost_at is not null) or (kind in ('revoke_project_keys', 'purge_project_artifacts') and project_id is not null) or (kind = 'grant_new_project_credits' and project_id is not null and credits > 0));`,
    );
    this.addSql(
      `alter table "catalog"."key_notifications" add constraint "key_notifications_kind_check" check ("kind" in ('disable_member_keys', 'revoke_project_keys', 'purge_project_artifacts', 'grant_new_project_credits'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`delete from "catalog"."key_notifications" where kind = 'grant_new_project_credits';`);
    this.addSql(
      `alter table "catalog"."key_notifications" drop constraint "key_notifications_fields_match_kind";`,
    );
    this.addSql(`alter table "catalog"."key_notifications" drop constraint "key_notifications_kind_check";`);
    this.addSql(`alter table "catalog"."key_notifications" drop column "credits";`);
    this.addSql(
      `alter table "catalog"."key_notifications" add constraint "key_notifications_fields_match_kind" check (((kind = 'disable_member_keys'::text) AND (member_id IS NOT NULL) AND (lost_at IS NOT NULL)) OR ((kind = ANY (ARRAY['revoke_project_keys'::text, 'purge_project_artifacts'::text])) AND (project_id IS NOT NULL)));`,
    );
    this.addSql(
      `alter table "catalog"."key_notifications" add constraint "key_notifications_kind_check" check ("kind" in ('disable_member_keys', 'revoke_project_keys', 'purge_project_artifacts'));`,
    );
  }
}
