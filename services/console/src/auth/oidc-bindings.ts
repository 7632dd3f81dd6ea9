import { Code, ConnectError } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { MemberState } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Orm } from "@testrun/kit";
import type { Directory, Membership } from "../directory.js";

/** Who an OpenID provider says signed in: its issuer, the subject (stable id) and a verified email. */
export interface OidcIdentity {
  issuer: string;
  subject: string;
  email: string;
}

/** The text with its ASCII letters in lower case, and nothing else changed. */
export const asciiLowerCase = (text: string) => text.replace(/[A-Z]/g, (letter) => letter.toLowerCase());

/**
 * Members bound to an OpenID identity (schema `console`, table `oidc_bindings`). A member is bound
 * to the issuer and subject of the first verified sign-in with its email, and afterwards only that
 * subject signs in as it: an email changed at the provider keeps the person's members (and takes
 * no one else's bound member), and another subject showing the same email takes over nothing.
 *
 * Binding by email needs the provider's email exactly as the catalog stores it but for ASCII
 * letter case: the catalog's normal form (NFKC, lower case, IDNA domain) folds lookalikes such as
 * "\u212Aate@…" (KELVIN SIGN) into "kate@…", and a provider that lets an account choose such an
 * address must not get the plain address's member. A binding ends with its member: when the
 * console removes the member, and when a sign-in finds its member removed (by testrunctl), so a
 * member added again is bound afresh rather than to its former person's subject.
 */
export class OidcBindings {
  constructor(
    private readonly orm: Orm,
    private readonly directory: Directory,
  ) {}

  private em(): EntityManager {
    return this.orm.em.fork();
  }

  /**
   * The active memberships an OpenID sign-in covers: the members bound to this identity, after
   * binding the unbound active members whose stored email is the verified one.
   */
  async membershipsOf(identity: OidcIdentity, now = new Date()): Promise<Membership[]> {
    const em = this.em();
    // An email the catalog refuses as an address (INVALID_ARGUMENT) is nobody's.
    const found = await this.directory.membershipsOf(identity.email).catch((error: unknown) => {
      if (ConnectError.from(error).code === Code.InvalidArgument) return [];
      throw error;
    });
    const byEmail = found.filter(({ member }) => member.email === asciiLowerCase(identity.email));
    // A member bound already (to anyone) stays as it is: the first subject keeps it.
    for (const { member } of byEmail)
      await em.execute(
        `insert into console.oidc_bindings (member_id, issuer, subject, email, bound_at)
         values (?, ?, ?, ?, ?) on conflict (member_id) do nothing`,
        [member.id, identity.issuer, identity.subject, member.email, now],
      );
    const bound = await em.execute<{ member_id: string; email: string }[]>(
      "select member_id, email from console.oidc_bindings where issuer = ? and subject = ?",
      [identity.issuer, identity.subject],
    );
    const memberships = await this.directory.activeMemberships(
      bound.map((row) => ({ id: row.member_id, email: row.email })),
    );
    const active = new Set(memberships.map(({ member }) => member.id));
    const missing = bound.filter((row) => !active.has(row.member_id)).map((row) => row.member_id);
    await this.unbindRemoved(missing);
    return memberships;
  }

  /** Ends the bindings of these members (removed: whoever the catalog adds again is bound afresh). */
  async unbind(memberIds: readonly string[]): Promise<void> {
    if (memberIds.length === 0) return;
    await this.em().execute(
      `delete from console.oidc_bindings where member_id in (${memberIds.map(() => "?").join(", ")})`,
      [...memberIds],
    );
  }

  /** Ends the bindings of those of these members the catalog has removed (or never had). */
  private async unbindRemoved(memberIds: readonly string[]): Promise<void> {
    const members = await Promise.all(memberIds.map((id) => this.directory.member(id)));
    await this.unbind(
      memberIds.filter((_, i) => {
        const member = members[i];
        return !member || member.state !== MemberState.ACTIVE;
      }),
    );
  }
}
