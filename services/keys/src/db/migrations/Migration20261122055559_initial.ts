import { Migration } from "@mikro-orm/migrations";

export class Migration20261122055559_initial extends Migration {
  override name = "Migration20261122055559_initial";

  override up(): void | Promise<void> {
    this.addSql(`create schema if not exists "keys";`);
    this.addSql(
      `create table "keys"."api_keys" ("id" text not null, "project_id" text not null, "organization_id" text not null, "name" text not null, "display_prefix" text not null, "fingerprint" text not null, "creator_member_id" text not null, "created_at" timestamptz not null, "expiry" text not null, "expires_at" timestamptz null, "last_used_at" timestamptz null, "revoked_at" timestamptz null, "disabled_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(
      `create index "api_keys_project_created_index" on "keys"."api_keys" ("project_id", "created_at", "id");`,
    );
    this.addSql(
      `create index "api_keys_creator_member_index" on "keys"."api_keys" ("creator_member_id", "created_at");`,
    );
    this.addSql(
      `alter table "keys"."api_keys" add constraint "api_keys_fingerprint_unique" unique ("fingerprint");`,
    );

    this.addSql(
      `create table "keys"."member_rights_losses" ("member_id" text not null, "lost_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("member_id"));`,
    );

    this.addSql(
      `alter table "keys"."api_keys" add constraint "api_keys_name_length" check (char_length(name) >= 1 and char_length(name) <= 100);`,
    );
    this.addSql(
      `alter table "keys"."api_keys" add constraint "api_keys_display_prefix_length" check (char_length(display_prefix) = 12);`,
    );
    this.addSql(
      `alter table "keys"."api_keys" add constraint "api_keys_fingerprint_sha256_hex" check (fingerprint ~ '^[0-9a-f]{64}$');`,
    );
    this.addSql(
      `alter table "keys"."api_keys" add constraint "api_keys_expiry_matches_expires_at" check ((expiry = 'never') = (expires_at is null));`,
    );
    this.addSql(
      `alter table "keys"."api_keys" add constraint "api_keys_expires_after_creation" check (expires_at > created_at);`,
    );
    this.addSql(
      `alter table "keys"."api_keys" add constraint "api_keys_expiry_check" check ("expiry" in ('30d', '90d', '1y', 'never'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "keys"."api_keys" cascade;`);
    this.addSql(`drop table if exists "keys"."member_rights_losses" cascade;`);

    this.addSql(`drop schema if exists "keys";`);
  }
}
