import { Migration } from "@mikro-orm/migrations";

/** StartRunRequest.idempotency_key, and the order ListFinishedRuns reads finished runs in. */
export class Migration20261127203533_idempotency_key extends Migration {
  override name = "Migration20261127203533_idempotency_key";

  override up(): void | Promise<void> {
    this.addSql(`alter table "runs"."runs" add "idempotency_key" text null;`);
    this.addSql(
      `create unique index "runs_project_idempotency_key_unique" on "runs"."runs" ("project_id", "idempotency_key") where idempotency_key is not null and charge_state <> 'abandoned';`,
    );
    this.addSql(
      `create index "runs_finished_index" on "runs"."runs" ("finished_at", "id") where finished_at is not null and charge_state = 'charged';`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "runs"."runs_finished_index";`);
    this.addSql(`drop index "runs"."runs_project_idempotency_key_unique";`);
    this.addSql(`alter table "runs"."runs" drop column "idempotency_key";`);
  }
}
