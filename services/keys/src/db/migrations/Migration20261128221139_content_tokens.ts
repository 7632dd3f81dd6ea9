import { Migration } from "@mikro-orm/migrations";

export class Migration20261128221139_content_tokens extends Migration {
  override name = "Migration20261128221139_content_tokens";

  override up(): void | Promise<void> {
    this.addSql(`alter table "keys"."api_keys" add "kind" text not null default 'api';`);
    this.addSql(
      `alter table "keys"."api_keys" add constraint "api_keys_display_prefix_of_kind" check (left(display_prefix, 4) = case kind when 'api' then 'trk_' else 'trc_' end);`,
    );
    this.addSql(
      `alter table "keys"."api_keys" add constraint "api_keys_kind_check" check ("kind" in ('api', 'content'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "keys"."api_keys" drop constraint "api_keys_display_prefix_of_kind";`);
    this.addSql(`alter table "keys"."api_keys" drop constraint "api_keys_kind_check";`);
    this.addSql(`alter table "keys"."api_keys" drop column "kind";`);
  }
}
