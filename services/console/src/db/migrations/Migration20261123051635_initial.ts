import { Migration } from "@mikro-orm/migrations";

export class Migration20261123051635_initial extends Migration {
  override name = "Migration20261123051635_initial";

  override up(): void | Promise<void> {
    this.addSql(`create schema if not exists "console";`);
    this.addSql(
      `create table "console"."oidc_attempts" ("state_digest" text not null, "code_verifier" text not null, "nonce" text not null, "return_to" text not null, "expires_at" timestamptz not null, primary key ("state_digest"));`,
    );
    this.addSql(`create index "oidc_attempts_expires_index" on "console"."oidc_attempts" ("expires_at");`);

    this.addSql(
      `create table "console"."sessions" ("digest" text not null, "email" text not null, "method" text not null, "created_at" timestamptz not null, "last_seen_at" timestamptz not null, "expires_at" timestamptz not null, primary key ("digest"));`,
    );
    this.addSql(`create index "sessions_email_index" on console.sessions (lower("email"));`);
    this.addSql(`create index "sessions_expires_index" on "console"."sessions" ("expires_at");`);

    this.addSql(
      `create table "console"."sign_in_links" ("digest" text not null, "member_id" text not null, "created_at" timestamptz not null, "expires_at" timestamptz not null, "used_at" timestamptz null, primary key ("digest"));`,
    );
    this.addSql(`create index "sign_in_links_expires_index" on "console"."sign_in_links" ("expires_at");`);

    this.addSql(
      `alter table "console"."sessions" add constraint "sessions_digest_sha256_hex" check (digest ~ '^[0-9a-f]{64}$');`,
    );

    this.addSql(
      `alter table "console"."sign_in_links" add constraint "sign_in_links_digest_sha256_hex" check (digest ~ '^[0-9a-f]{64}$');`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "console"."oidc_attempts" cascade;`);
    this.addSql(`drop table if exists "console"."sessions" cascade;`);
    this.addSql(`drop table if exists "console"."sign_in_links" cascade;`);

    this.addSql(`drop schema if exists "console";`);
  }
}
