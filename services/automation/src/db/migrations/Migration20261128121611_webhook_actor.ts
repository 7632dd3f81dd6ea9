import { Migration } from "@mikro-orm/migrations";

/**
 * Webhooks act for a member and keep their URL sealed (docs/automation.md, "Acting member" and
 * "URLs at rest"); delivery errors already stored lose any quote of their webhook's URL. Webhooks made before are paused with a reason: nobody recorded made them, so no
 * member can be checked before a delivery (one made by a member since removed would go on sending
 * for them). An EDITOR or above resumes one to act for themselves; their pending deliveries are
 * not sent (Redeliver sends one again once resumed).
 *
 * The URLs are sealed by the service (webhook-urls.ts: it holds WEBHOOK_SECRETS_KEY) when it
 * starts, and again for rows an older replica writes during the upgrade; `url` becomes nullable for
 * that and is dropped in a later release. Additive only, as upgrades need (docs/deploy.md).
 */
export class Migration20261128121611_webhook_actor extends Migration {
  override name = "Migration20261128121611_webhook_actor";

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "automation"."webhooks" add "url_sealed" text null, add "url_origin" text not null default '', add "paused_reason" text not null default '', add "acts_for_member_id" text null, add "created_by_member_id" text null, add "updated_by_member_id" text null, add "updated_by_operator" text null, add "updated_at" timestamptz null;`,
    );
    this.addSql(`alter table "automation"."webhooks" alter column "url" drop not null;`);
    // Delivery errors kept a receiver's answer as it came, and Viewers read them: one quoting the
    // URL, or its path and query, loses them here, while the URL is still plain to find.
    this.addSql(
      `update "automation"."deliveries" d set last_error = replace(replace(d.last_error, w.url, '[url]'),
         coalesce(nullif(substring(w.url from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([/?][^#]*)'), '/'), w.url), '[url]')
       from "automation"."webhooks" w where w.id = d.webhook_id and d.last_error <> '';`,
    );
    this.addSql(
      `update "automation"."deliveries" set state = 'failed', next_attempt_at = null,
         last_error = 'not sent: the webhook was paused (no member recorded)'
       where state = 'pending' and webhook_id in (select id from "automation"."webhooks" where acts_for_member_id is null);`,
    );
    this.addSql(
      `update "automation"."webhooks" set paused = true,
         paused_reason = 'no member recorded: it was made before webhooks recorded who made them; resume it to act for yourself'
       where acts_for_member_id is null;`,
    );
  }

  override down(): void | Promise<void> {
    // For development only: sealed URLs go with their column.
    this.addSql(
      `alter table "automation"."webhooks" drop column "url_sealed", drop column "url_origin", drop column "paused_reason", drop column "acts_for_member_id", drop column "created_by_member_id", drop column "updated_by_member_id", drop column "updated_by_operator", drop column "updated_at";`,
    );
  }
}
