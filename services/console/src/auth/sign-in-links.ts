import type { EntityManager } from "@mikro-orm/postgresql";
import type { Orm } from "@testrun/kit";
import { digestOf, newCredential } from "./credentials.js";

/** How long a sign-in link works if unused (issue: 15 minutes). */
export const signInLinkLifetimeMs = 15 * 60_000;

/**
 * One-time sign-in links (schema `console`, table `sign_in_links`): only the token's digest is
 * stored; using a link marks it used in the same statement that checks it, so two tabs racing
 * with one link cannot both get in.
 */
export class SignInLinks {
  constructor(private readonly orm: Orm) {}

  private em(): EntityManager {
    return this.orm.em.fork();
  }

  /** A new link's token for a member; valid 15 minutes, usable once. */
  async issue(memberId: string, now = new Date()): Promise<{ token: string; expiresAt: Date }> {
    const token = newCredential();
    const expiresAt = new Date(now.getTime() + signInLinkLifetimeMs);
    await this.em().execute(
      "insert into console.sign_in_links (digest, member_id, created_at, expires_at) values (?, ?, ?, ?)",
      [digestOf(token), memberId, now, expiresAt],
    );
    return { token, expiresAt };
  }

  /** The member a link would sign in, without using it; undefined if unknown, used, or expired. */
  async peek(token: string, now = new Date()): Promise<string | undefined> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
    const [row] = await this.em().execute<{ member_id: string }[]>(
      "select member_id from console.sign_in_links where digest = ? and used_at is null and expires_at > ?",
      [digestOf(token), now],
    );
    return row?.member_id;
  }

  /** Uses a link: the member it signs in, or undefined (unknown, used, or expired). */
  async redeem(token: string, now = new Date()): Promise<string | undefined> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
    const [row] = await this.em().execute<{ member_id: string }[]>(
      `update console.sign_in_links set used_at = ?
       where digest = ? and used_at is null and expires_at > ? returning member_id`,
      [now, digestOf(token), now],
    );
    return row?.member_id;
  }
}
