import { Migration } from "@mikro-orm/migrations";

/**
 * Environments' base URLs lose any `user:pass@` (docs/security.md, "Environments hold no
 * credentials"): the catalog refuses it now, because every member and key of the project reads the
 * base URL. A URL with one never worked for a test (fetch refuses URLs carrying credentials), so
 * nothing that ran changes; the credential is not kept anywhere. The authority ends at the first
 * "/" (queries and fragments were always refused), and its last "@" ends the user part.
 */
export class Migration20261124232000_base_url_without_userinfo extends Migration {
  override name = "Migration20261124232000_base_url_without_userinfo";

  override up(): void | Promise<void> {
    this.addSql(
      `update catalog.environments set base_url = regexp_replace(base_url, '^([A-Za-z][A-Za-z0-9+.-]*://)[^/]*@', '\\1'), updated_at = now()
       where base_url ~ '^[A-Za-z][A-Za-z0-9+.-]*://[^/]*@';`,
    );
  }

  override down(): void | Promise<void> {
    // What was removed is gone on purpose.
  }
}
