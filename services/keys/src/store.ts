import type { EntityManager } from "@mikro-orm/postgresql";
import { type DbTimestamp, dbDate, dbDateOrNull, newId, type Orm, tombstoneTtlSeconds } from "@testrun/kit";
import type { KeyExpiryChoice, KeyKindName } from "./db/entities.js";
import type { StoredKey } from "./key-state.js";

/** Most keys of one kind that may work at once in one project (keys.proto, CreateKey). */
export const maxActiveKeysPerProject = 100;

/** last_used_at is written at most once a minute per key (docs/keys.md). */
export const lastUseResolutionMs = 60_000;

interface Row {
  id: string;
  project_id: string;
  organization_id: string;
  name: string;
  display_prefix: string;
  fingerprint: string;
  creator_member_id: string;
  created_at: DbTimestamp;
  expiry: KeyExpiryChoice;
  expires_at: DbTimestamp | null;
  last_used_at: DbTimestamp | null;
  revoked_at: DbTimestamp | null;
  disabled_at: DbTimestamp | null;
  creator_lost_at: DbTimestamp | null;
  kind: KeyKindName;
}

const toKey = (row: Row): StoredKey => ({
  id: row.id,
  projectId: row.project_id,
  organizationId: row.organization_id,
  name: row.name,
  displayPrefix: row.display_prefix,
  fingerprint: row.fingerprint,
  creatorMemberId: row.creator_member_id,
  createdAt: dbDate(row.created_at),
  expiry: row.expiry,
  expiresAt: dbDateOrNull(row.expires_at),
  lastUsedAt: dbDateOrNull(row.last_used_at),
  revokedAt: dbDateOrNull(row.revoked_at),
  disabledAt: dbDateOrNull(row.disabled_at),
  creatorLostAt: dbDateOrNull(row.creator_lost_at),
  kind: row.kind,
});

/** Every key column plus the creator's remembered loss of rights, which decides its state too. */
const selectKeys = `
  select k.id, k.project_id, k.organization_id, k.name, k.display_prefix, k.fingerprint,
         k.creator_member_id, k.created_at, k.expiry, k.expires_at, k.last_used_at, k.revoked_at,
         k.disabled_at, l.lost_at as creator_lost_at, k.kind
  from keys.api_keys k
  left join keys.member_rights_losses l on l.member_id = k.creator_member_id`;

/** A key whose cache entry must become a tombstone. */
export interface KilledKey {
  id: string;
  fingerprint: string;
  revoked: boolean;
}

export interface NewKey {
  projectId: string;
  organizationId: string;
  name: string;
  displayPrefix: string;
  fingerprint: string;
  creatorMemberId: string;
  createdAt: Date;
  expiry: KeyExpiryChoice;
  expiresAt: Date | null;
  kind: KeyKindName;
}

export type Created =
  | { kind: "created"; key: StoredKey }
  | { kind: "too_many" }
  | { kind: "creator_lost_rights" };

/**
 * The keys schema, in raw SQL. Every write is a single statement or one transaction, so a failed
 * call leaves nothing half-written.
 */
export class KeyStore {
  constructor(private readonly orm: Orm) {}

  private em(): EntityManager {
    return this.orm.em.fork();
  }

  private transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    return this.orm.em.fork().transactional(work);
  }

  create(key: NewKey): Promise<Created> {
    return this.transaction(async (em) => {
      // Creations in one project queue here, so two of them cannot both take the 100th place.
      await em.execute("select pg_advisory_xact_lock(hashtext(?))", [`keys:project:${key.projectId}`]);
      const [counted] = await em.execute<{ active: string }[]>(
        `select count(*) as active from (${selectKeys}
           where k.project_id = ? and k.kind = ? and k.revoked_at is null and k.disabled_at is null
             and (k.expires_at is null or k.expires_at > ?)
             and (l.lost_at is null or k.created_at > l.lost_at)) as working`,
        [key.projectId, key.kind, key.createdAt],
      );
      if (Number(counted?.active ?? 0) >= maxActiveKeysPerProject) return { kind: "too_many" };
      // The catalog approved the creator, but a loss of rights reported since then wins: such a
      // key would be dead at birth, so it is refused rather than stored.
      const [loss] = await em.execute<{ lost_at: DbTimestamp }[]>(
        "select lost_at from keys.member_rights_losses where member_id = ?",
        [key.creatorMemberId],
      );
      if (loss && key.createdAt <= dbDate(loss.lost_at)) return { kind: "creator_lost_rights" };
      const id = newId("key");
      await em.execute(
        `insert into keys.api_keys (id, project_id, organization_id, name, display_prefix, fingerprint,
           creator_member_id, created_at, expiry, expires_at, kind)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          id,
          key.projectId,
          key.organizationId,
          key.name,
          key.displayPrefix,
          key.fingerprint,
          key.creatorMemberId,
          key.createdAt,
          key.expiry,
          key.expiresAt,
          key.kind,
        ],
      );
      const [row] = await em.execute<Row[]>(`${selectKeys} where k.id = ?`, [id]);
      return { kind: "created", key: toKey(row as Row) };
    });
  }

  /** A project's keys of one kind, oldest first. */
  async list(projectId: string, kind: KeyKindName, includeRevoked: boolean): Promise<StoredKey[]> {
    const rows = await this.em().execute<Row[]>(
      `${selectKeys} where k.project_id = ? and k.kind = ? ${includeRevoked ? "" : "and k.revoked_at is null"}
       order by k.created_at, k.id`,
      [projectId, kind],
    );
    return rows.map(toKey);
  }

  async findByFingerprint(fingerprint: string): Promise<StoredKey | undefined> {
    const [row] = await this.em().execute<Row[]>(`${selectKeys} where k.fingerprint = ?`, [fingerprint]);
    return row ? toKey(row) : undefined;
  }

  /** Revokes one key of a project (a revoked key keeps its first revoked_at); undefined when there is no such key. */
  async revoke(projectId: string, keyId: string, now: Date): Promise<StoredKey | undefined> {
    const em = this.em();
    await em.execute(
      "update keys.api_keys set revoked_at = ? where id = ? and project_id = ? and revoked_at is null",
      [now, keyId, projectId],
    );
    const [row] = await em.execute<Row[]>(`${selectKeys} where k.id = ? and k.project_id = ?`, [
      keyId,
      projectId,
    ]);
    return row ? toKey(row) : undefined;
  }

  /**
   * Revokes every key of a project. Returns how many this call revoked, and every key whose cache
   * entry must be a tombstone: all those revoked recently enough that a valid cache entry written
   * before their revocation could still be around (so a retried call repairs a tombstone an
   * earlier attempt failed to write).
   */
  async revokeProject(projectId: string, now: Date): Promise<{ revoked: number; kill: KilledKey[] }> {
    const em = this.em();
    const revoked = await em.execute<{ id: string }[]>(
      "update keys.api_keys set revoked_at = ? where project_id = ? and revoked_at is null returning id",
      [now, projectId],
    );
    const kill = await em.execute<{ id: string; fingerprint: string }[]>(
      `select id, fingerprint from keys.api_keys
       where project_id = ? and revoked_at >= ? and (expires_at is null or expires_at > ?)`,
      [projectId, new Date(now.getTime() - tombstoneTtlSeconds * 1000), now],
    );
    return { revoked: revoked.length, kill: kill.map((k) => ({ ...k, revoked: true })) };
  }

  /**
   * Records that a member lost Editor-or-above rights at `lostAt` and disables every key it
   * created at or before the (latest) loss. Two transactions, on purpose: the loss is committed
   * first, so from then on VerifyKey refuses any such key through the remembered lost_at, even one
   * whose creation commits while this runs; the second step then marks the keys it can see and
   * names them for tombstones. A VerifyKey that read a key before the first commit can only have
   * written a valid cache entry that the tombstone overwrites, or finds the tombstone and writes
   * nothing.
   */
  async disableMember(
    memberId: string,
    lostAt: Date,
    now: Date,
  ): Promise<{ disabled: number; kill: KilledKey[] }> {
    const em = this.em();
    // lost_at only ever moves forward: a repeated or older report changes nothing.
    const [loss] = await em.execute<{ lost_at: DbTimestamp }[]>(
      `insert into keys.member_rights_losses as l (member_id, lost_at, updated_at) values (?, ?, ?)
       on conflict (member_id) do update set lost_at = excluded.lost_at, updated_at = excluded.updated_at
         where l.lost_at < excluded.lost_at
       returning lost_at`,
      [memberId, lostAt, now],
    );
    const stored =
      loss ??
      (
        await em.execute<{ lost_at: DbTimestamp }[]>(
          "select lost_at from keys.member_rights_losses where member_id = ?",
          [memberId],
        )
      )[0];
    const latest = stored ? dbDate(stored.lost_at) : lostAt;
    // disabled_at is the loss itself: the catalog refuses these keys from that moment on.
    const disabled = await em.execute<{ id: string }[]>(
      `update keys.api_keys set disabled_at = ?
       where creator_member_id = ? and created_at <= ? and disabled_at is null and revoked_at is null
       returning id`,
      [latest, memberId, latest],
    );
    const kill = await em.execute<{ id: string; fingerprint: string; revoked_at: DbTimestamp | null }[]>(
      `select id, fingerprint, revoked_at from keys.api_keys
       where creator_member_id = ? and created_at <= ? and (expires_at is null or expires_at > ?)`,
      [memberId, latest, now],
    );
    return {
      disabled: disabled.length,
      kill: kill.map((k) => ({ id: k.id, fingerprint: k.fingerprint, revoked: k.revoked_at !== null })),
    };
  }

  /**
   * Moves a key's last_used_at to `now` unless it was set less than a minute ago. The condition is
   * in the statement, so even several replicas write a key at most once a minute; a row that
   * matches nothing is not written at all.
   */
  async touch(keyId: string, now: Date): Promise<void> {
    await this.em().execute(
      "update keys.api_keys set last_used_at = ? where id = ? and (last_used_at is null or last_used_at < ?)",
      [now, keyId, new Date(now.getTime() - lastUseResolutionMs)],
    );
  }

  /**
   * Records batched uses in one statement: per key the latest use, written only when it is more
   * than a minute after the recorded one (so last_used_at only moves forward, at most once a minute).
   * Unknown ids match no row.
   */
  async recordUses(uses: { keyId: string; usedAt: Date }[]): Promise<void> {
    if (uses.length === 0) return;
    const batch = JSON.stringify(uses.map((u) => ({ id: u.keyId, used_at: u.usedAt.toISOString() })));
    await this.em().execute(
      `update keys.api_keys k set last_used_at = u.used_at
       from (select id, max(used_at) as used_at
             from jsonb_to_recordset(?::jsonb) as x(id text, used_at timestamptz) group by id) u
       where k.id = u.id
         and (k.last_used_at is null or k.last_used_at < u.used_at - interval '${lastUseResolutionMs / 1000} seconds')`,
      [batch],
    );
  }
}
