import { Migration } from "@mikro-orm/migrations";

/**
 * Sessions act as the members named at sign-in (session_members) instead of every member sharing
 * an email; OpenID identities are bound to members (oidc_bindings); sign-in attempts move to a
 * sealed cookie (oidc_attempts goes). Sessions from before cover no member: everyone signs in
 * once more.
 */
export class Migration20261124230336_member_sessions extends Migration {
  override name = "Migration20261124230336_member_sessions";

  override up(): void | Promise<void> {
    this.addSql(`delete from "console"."sessions";`);
    this.addSql(`drop index "console"."sessions_email_index";`);
    this.addSql(
      `create table "console"."session_members" ("session_digest" text not null, "member_id" text not null, "email" text not null, primary key ("session_digest", "member_id"));`,
    );
    this.addSql(`create index "session_members_member_index" on "console"."session_members" ("member_id");`);
    this.addSql(
      `alter table "console"."session_members" add constraint "session_members_session_digest_foreign" foreign key ("session_digest") references "console"."sessions" ("digest") on delete cascade;`,
    );
    this.addSql(
      `create table "console"."oidc_bindings" ("member_id" text not null, "issuer" text not null, "subject" text not null, "email" text not null, "bound_at" timestamptz not null, primary key ("member_id"));`,
    );
    this.addSql(
      `create index "oidc_bindings_subject_index" on "console"."oidc_bindings" ("issuer", "subject");`,
    );
    this.addSql(`drop table if exists "console"."oidc_attempts" cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "console"."session_members" cascade;`);
    this.addSql(`drop table if exists "console"."oidc_bindings" cascade;`);
    this.addSql(`create index "sessions_email_index" on console.sessions (lower("email"));`);
    this.addSql(
      `create table "console"."oidc_attempts" ("state_digest" text not null, "code_verifier" text not null, "nonce" text not null, "return_to" text not null, "expires_at" timestamptz not null, primary key ("state_digest"));`,
    );
    this.addSql(`create index "oidc_attempts_expires_index" on "console"."oidc_attempts" ("expires_at");`);
  }
}
