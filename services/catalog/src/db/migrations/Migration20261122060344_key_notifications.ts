import { Migration } from "@mikro-orm/migrations";

export class Migration20261122060344_key_notifications extends Migration {
  override name = "Migration20261122060344_key_notifications";

  override up(): void | Promise<void> {
    this.addSql(
      `create table "catalog"."key_notifications" ("id" uuid not null, "kind" text not null, "member_id" text null, "lost_at" timestamptz null, "project_id" text null, "created_at" timestamptz not null, "attempts" int not null default 0, "next_attempt_at" timestamptz not null, "last_error" text null, primary key ("id"));`,
    );
    this.addSql(
      `create index "key_notifications_next_attempt_index" on "catalog"."key_notifications" ("next_attempt_at");`,
    );

    this.addSql(
      `alter table "catalog"."key_notifications" add constraint "key_notifications_fields_match_kind" check ((kind = 'disable_member_keys' and member_id is not null and lost_at is not null) or (kind = 'revoke_project_keys' and project_id is not null));`,
    );
    this.addSql(
      `alter table "catalog"."key_notifications" add constraint "key_notifications_kind_check" check ("kind" in ('disable_member_keys', 'revoke_project_keys'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "catalog"."key_notifications" cascade;`);
  }
}
