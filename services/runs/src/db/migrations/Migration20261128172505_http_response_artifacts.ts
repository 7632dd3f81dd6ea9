import { Migration } from "@mikro-orm/migrations";

/**
 * A fourth kind of artifact (issue 39): `http_response`, what a failed HTTP step got (its status,
 * headers, the beginning of its body and its timing, redacted), JSON.
 */
export class Migration20261128172505_http_response_artifacts extends Migration {
  override name = "Migration20261128172505_http_response_artifacts";

  override up(): void | Promise<void> {
    this.addSql(`alter table "runs"."artifacts" drop constraint "artifacts_kind_check";`);
    this.addSql(
      `alter table "runs"."artifacts" add constraint "artifacts_kind_check" check ("kind" in ('screenshot', 'trace', 'browser_log', 'http_response'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "runs"."artifacts" drop constraint "artifacts_kind_check";`);
    this.addSql(
      `alter table "runs"."artifacts" add constraint "artifacts_kind_check" check ("kind" in ('screenshot', 'trace', 'browser_log'));`,
    );
  }
}
