import { Migration } from "@mikro-orm/migrations";

export class Migration20261122105252_voided_runs extends Migration {
  override name = "Migration20261122105252_voided_runs";

  override up(): void | Promise<void> {
    this.addSql(
      `create table "billing"."voided_runs" ("run_id" varchar(255) not null, "project_id" varchar(255) not null, "reason" text not null, "created_at" timestamptz not null, primary key ("run_id"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "billing"."voided_runs" cascade;`);
  }
}
