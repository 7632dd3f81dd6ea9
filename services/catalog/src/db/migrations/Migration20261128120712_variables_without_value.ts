import { Migration } from "@mikro-orm/migrations";

/**
 * Variables without a value (Variable.has_value): ImportContent creates a content document's
 * variables by name only, since a document never carries values; a member sets each one later.
 * A value stays whole: its ciphertext, nonce and tag are all there or all null.
 */
export class Migration20261128120712_variables_without_value extends Migration {
  override name = "Migration20261128120712_variables_without_value";

  override up(): void | Promise<void> {
    this.addSql(`alter table "catalog"."variables" alter column "value_ciphertext" drop not null;`);
    this.addSql(`alter table "catalog"."variables" alter column "value_iv" drop not null;`);
    this.addSql(`alter table "catalog"."variables" alter column "value_tag" drop not null;`);
    this.addSql(
      `alter table "catalog"."variables" add constraint "variables_value_whole" check ((value_ciphertext is null) = (value_iv is null) and (value_iv is null) = (value_tag is null));`,
    );
  }

  override down(): void | Promise<void> {
    // A variable without a value holds nothing to keep; the older schema cannot hold it.
    this.addSql(`delete from "catalog"."variables" where "value_ciphertext" is null;`);
    this.addSql(`alter table "catalog"."variables" drop constraint "variables_value_whole";`);
    this.addSql(`alter table "catalog"."variables" alter column "value_ciphertext" set not null;`);
    this.addSql(`alter table "catalog"."variables" alter column "value_iv" set not null;`);
    this.addSql(`alter table "catalog"."variables" alter column "value_tag" set not null;`);
  }
}
