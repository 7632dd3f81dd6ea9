import { Migration } from "@mikro-orm/migrations";

/**
 * Where the automation service is in the runs service's quarantine events (ListQuarantineEvents),
 * beside its cursor of finished runs: the webhooks' test_case.quarantined, .quarantine_lifted and
 * .quarantine_expired (docs/automation.md, "Events"). Additive.
 */
export class Migration20261128210000_quarantine_cursor extends Migration {
  override name = "Migration20261128210000_quarantine_cursor";

  override up(): void | Promise<void> {
    this.addSql(`alter table "automation"."run_cursor" add "quarantine_cursor" text not null default '';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "automation"."run_cursor" drop column "quarantine_cursor";`);
  }
}
