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

/** A live session, as a request sees it. */
export interface LiveSession {
  digest: string;
  email: string;
  expiresAt: Date;
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
 * ends for every console replica at once.
 */
export class SessionStore {
  constructor(
    private readonly orm: Orm,
    private readonly limits: SessionLimits,
  ) {}

  private em(): EntityManager {
    return this.orm.em.fork();
  }

  /** Starts a session for an email; returns the cookie value (never stored as such). */
  async start(
    email: string,
    method: "link" | "oidc",
    now = new Date(),
  ): Promise<{ id: string; expiresAt: Date }> {
    const id = newCredential();
    const expiresAt = new Date(now.getTime() + this.limits.maxMs);
    await this.em().execute(
      `insert into console.sessions (digest, email, method, created_at, last_seen_at, expires_at)
       values (?, ?, ?, ?, ?, ?)`,
      [digestOf(id), email, method, now, now, expiresAt],
    );
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
    return { digest, email: row.email, expiresAt };
  }

  /** Ends one session (sign-out). Ending an unknown or ended session changes nothing. */
  async end(id: string): Promise<void> {
    await this.em().execute("delete from console.sessions where digest = ?", [digestOf(id)]);
  }

  /** Ends every session of a person (their last membership is gone). */
  async endAllOf(email: string): Promise<number> {
    const result = await this.em().execute(
      "delete from console.sessions where lower(email) = lower(?)",
      [email],
      "run",
    );
    return Number((result as { affectedRows?: number }).affectedRows ?? 0);
  }

  /** Deletes sessions, links and sign-in attempts past their end (rows nobody can use any more). */
  async sweep(now = new Date()): Promise<void> {
    const em = this.em();
    const idleBefore = new Date(now.getTime() - this.limits.idleMs);
    await em.execute("delete from console.sessions where expires_at <= ? or last_seen_at <= ?", [
      now,
      idleBefore,
    ]);
    await em.execute("delete from console.sign_in_links where expires_at <= ?", [now]);
    await em.execute("delete from console.oidc_attempts where expires_at <= ?", [now]);
  }
}
