import { Migration } from "@mikro-orm/migrations";

export class Migration20261122055239_initial extends Migration {
  override name = "Migration20261122055239_initial";

  override up(): void | Promise<void> {
    this.addSql(`create schema if not exists "billing";`);
    this.addSql(
      `create table "billing"."balances" ("project_id" varchar(255) not null, "balance" bigint not null default '0', "updated_at" timestamptz not null, primary key ("project_id"));`,
    );

    this.addSql(
      `create table "billing"."ledger_entries" ("id" varchar(255) not null, "project_id" varchar(255) not null, "kind" text not null, "amount" bigint not null, "run_id" varchar(255) null, "idempotency_key" varchar(255) null, "reason" text not null default '', "balance_after" bigint not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `create index "ledger_entries_project_id_index" on "billing"."ledger_entries" ("project_id");`,
    );
    this.addSql(
      `alter table "billing"."ledger_entries" add constraint "ledger_entries_run_id_kind_unique" unique ("run_id", "kind");`,
    );
    this.addSql(
      `alter table "billing"."ledger_entries" add constraint "ledger_entries_project_id_idempotency_key_unique" unique ("project_id", "idempotency_key");`,
    );

    this.addSql(
      `alter table "billing"."balances" add constraint "balances_not_negative" check (balance >= 0);`,
    );

    this.addSql(
      `alter table "billing"."ledger_entries" add constraint "ledger_entries_kind_check" check ("kind" in ('grant', 'charge', 'refund'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "billing"."balances" cascade;`);
    this.addSql(`drop table if exists "billing"."ledger_entries" cascade;`);

    this.addSql(`drop schema if exists "billing";`);
  }
}
