import { Migration } from "@mikro-orm/migrations";
import { normalizeEmail } from "../../validate.js";

interface Row {
  id: string;
  organization_id: string;
  email: string;
  role: string;
  removed_at: Date | null;
  created_at: Date;
}

/**
 * Emails become one stored form, compared exactly (validate.ts, normalizeEmail: NFKC, then lower
 * case, the domain in ASCII by IDNA), in code rather than with PostgreSQL's lower(), whose folding
 * depends on the locale. (IDNA joined the form before this migration was released; a stored
 * domain IDNA does not map keeps its folded spelling, and signs nobody in.)
 *
 * Two members of one organization can normalise to the same address (e.g. "kate@corp.com" and
 * "\u212Aate@corp.com", which a database in the C locale kept apart). One keeps the address: an
 * active one before a removed one, then one already in normal form, then the oldest. Every other
 * one is removed if it was active (with rights_lost_at and its keys' notification queued, as
 * RemoveMember does) and its email becomes "<old spelling> (superseded by <keeper id>)": no address
 * equals that, so it signs nobody in and is never reactivated, while the history (keys it created)
 * still names it. Most databases have no such pair.
 */
export class Migration20261124230335_normalized_emails extends Migration {
  override name = "Migration20261124230335_normalized_emails";

  override async up(): Promise<void> {
    const rows = (await this.execute(
      "select id, organization_id, email, role, removed_at, created_at from catalog.members order by created_at, id",
    )) as unknown as Row[];
    const groups = new Map<string, Row[]>();
    for (const row of rows) {
      const key = `${row.organization_id}\u0000${normalizeEmail(row.email)}`;
      groups.set(key, [...(groups.get(key) ?? []), row]);
    }
    // The indexes on lower() go first: while rows change, two spellings must not meet in the old one.
    // (Statements run in order with execute: addSql's would all run after this method.)
    await this.execute('drop index "catalog"."members_organization_email_unique"');
    await this.execute('drop index "catalog"."members_active_email_index"');
    const now = new Date();
    for (const group of groups.values()) {
      const normal = normalizeEmail(group[0]?.email ?? "");
      const rank = (row: Row) => (row.removed_at ? 2 : 0) + (row.email === normal ? 0 : 1);
      const [keeper, ...others] = [...group].sort((a, b) => rank(a) - rank(b));
      if (keeper && keeper.email !== normal)
        await this.execute("update catalog.members set email = ? where id = ?", [normal, keeper.id]);
      for (const other of others) {
        const marker = [...`${other.email} (superseded by ${keeper?.id})`].slice(0, 320).join("");
        await this.execute("update catalog.members set email = ? where id = ?", [marker, other.id]);
        if (other.removed_at) continue;
        const keyRights = other.role !== "viewer";
        await this.execute(
          "update catalog.members set removed_at = ?, rights_lost_at = case when ? then ?::timestamptz else rights_lost_at end where id = ?",
          [now, keyRights, now, other.id],
        );
        if (keyRights)
          await this.execute(
            `insert into catalog.key_notifications (id, kind, member_id, lost_at, created_at, attempts, next_attempt_at)
             values (gen_random_uuid(), 'disable_member_keys', ?, ?, ?, 0, ?)`,
            [other.id, now, now, now],
          );
      }
    }
    await this.execute(
      'create unique index "members_organization_email_unique" on "catalog"."members" ("organization_id", "email")',
    );
    await this.execute(
      'create index "members_active_email_index" on "catalog"."members" ("email") where "removed_at" is null',
    );
  }

  override down(): void | Promise<void> {
    // Normalised emails stay normalised: the old indexes on lower() accept them as they are.
    this.addSql('drop index "catalog"."members_organization_email_unique";');
    this.addSql('drop index "catalog"."members_active_email_index";');
    this.addSql(
      'create unique index "members_organization_email_unique" on "catalog"."members" ("organization_id", lower("email"));',
    );
    this.addSql(
      'create index "members_active_email_index" on "catalog"."members" (lower("email")) where "removed_at" is null;',
    );
  }
}
