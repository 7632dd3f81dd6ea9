import type { EntityManager } from "@mikro-orm/postgresql";
import { dbDate, type Orm } from "@testrun/kit";
import { digestOf, newCredential } from "./credentials.js";

/** last_seen_at moves at most once a minute: a read per call, not a write per call. */
const touchResolutionMs = 60_000;

export interface SessionLimits {
  /** A session ends after this long without a call… */
  idleMs: number;
  /** …and this long after sign-in at the latest. */
  maxMs: number;
}

/** A member a session acts as: its id, and its email as the catalog stores it (to look it up). */
export interface CoveredMember {
  id: string;
  email: string;
}

/** A live session, as a request sees it. */
export interface LiveSession {
  digest: string;
  email: string;
  expiresAt: Date;
  /** The members (one per organization) it acts as; fixed at sign-in. */
  members: CoveredMember[];
}

interface Row {
  digest: string;
  email: string;
  last_seen_at: Date | string;
  expires_at: Date | string;
}

/**
 * Server-side sessions (schema `console`, table `sessions`). The browser holds only the session
 * id in an HttpOnly cookie; the table holds its digest. Ending a session deletes its row, so it
 * ends for every console replica at once. A session covers the members named at sign-in
 * (`session_members`): a link's one member, or the members bound to an OpenID subject; never every
 * member that happens to share an email (docs/security.md, "Sign-in").
 */
export class SessionStore {
  constructor(
    private readonly orm: Orm,
    private readonly limits: SessionLimits,
  ) {}

  private em(): EntityManager {
    return this.orm.em.fork();
  }

  /** Starts a session acting as `members`; returns the cookie value (never stored as such). */
  async start(
    email: string,
    method: "link" | "oidc",
    members: CoveredMember[],
    now = new Date(),
  ): Promise<{ id: string; expiresAt: Date }> {
    if (members.length === 0) throw new Error("a session must cover at least one member");
    const id = newCredential();
    const digest = digestOf(id);
    const expiresAt = new Date(now.getTime() + this.limits.maxMs);
    await this.em().transactional(async (em) => {
      await em.execute(
        `insert into console.sessions (digest, email, method, created_at, last_seen_at, expires_at)
         values (?, ?, ?, ?, ?, ?)`,
        [digest, email, method, now, now, expiresAt],
      );
      for (const member of members)
        await em.execute(
          "insert into console.session_members (session_digest, member_id, email) values (?, ?, ?)",
          [digest, member.id, member.email],
        );
    });
    return { id, expiresAt };
  }

  /**
   * The live session a cookie value names, or undefined (unknown, idle too long, or past its end;
   * an ended session's row is deleted). Keeps the session alive.
   */
  async resume(id: string, now = new Date()): Promise<LiveSession | undefined> {
    const digest = digestOf(id);
    const em = this.em();
    const [row] = await em.execute<Row[]>(
      "select digest, email, last_seen_at, expires_at from console.sessions where digest = ?",
      [digest],
    );
    if (!row) return undefined;
    const lastSeen = dbDate(row.last_seen_at);
    const expiresAt = dbDate(row.expires_at);
    if (now >= expiresAt || now.getTime() - lastSeen.getTime() >= this.limits.idleMs) {
      await this.end(id);
      return undefined;
    }
    if (now.getTime() - lastSeen.getTime() >= touchResolutionMs) {
      await em.execute("update console.sessions set last_seen_at = ? where digest = ? and last_seen_at < ?", [
        now,
        digest,
        now,
      ]);
    }
    const members = await em.execute<{ member_id: string; email: string }[]>(
      "select member_id, email from console.session_members where session_digest = ? order by member_id",
      [digest],
    );
    return {
      digest,
      email: row.email,
      expiresAt,
      members: members.map((m) => ({ id: m.member_id, email: m.email })),
    };
  }

  /** Ends one session (sign-out). Ending an unknown or ended session changes nothing. */
  async end(id: string): Promise<void> {
    await this.em().execute("delete from console.sessions where digest = ?", [digestOf(id)]);
  }

  /**
   * Ends every session covering any of these members (one was removed; "Sign out everywhere").
   * Returns the digests of the sessions ended, so live streams of them can be closed too.
   */
  async endCovering(memberIds: readonly string[]): Promise<string[]> {
    if (memberIds.length === 0) return [];
    const rows = await this.em().execute<{ digest: string }[]>(
      `delete from console.sessions where digest in
         (select session_digest from console.session_members where member_id in (${memberIds.map(() => "?").join(", ")}))
       returning digest`,
      [...memberIds],
    );
    return rows.map((row) => row.digest);
  }

  /** Deletes sessions and links past their end (rows nobody can use any more). */
  async sweep(now = new Date()): Promise<void> {
    const em = this.em();
    const idleBefore = new Date(now.getTime() - this.limits.idleMs);
    await em.execute("delete from console.sessions where expires_at <= ? or last_seen_at <= ?", [
      now,
      idleBefore,
    ]);
    await em.execute("delete from console.sign_in_links where expires_at <= ?", [now]);
  }
}
