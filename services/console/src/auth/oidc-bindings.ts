import { Code, ConnectError } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Orm } from "@testrun/kit";
import type { Directory, Membership } from "../directory.js";

/** Who an OpenID provider says signed in: its issuer, the subject (stable id) and a verified email. */
export interface OidcIdentity {
  issuer: string;
  subject: string;
  email: string;
}

/**
 * Members bound to an OpenID identity (schema `console`, table `oidc_bindings`). A member is bound
 * to the issuer and subject of the first verified sign-in with its email, and afterwards only that
 * subject signs in as it: an email changed at the provider keeps the person's members (and takes
 * no one else's bound member), and another subject showing the same email takes over nothing.
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
    const byEmail = await this.directory.membershipsOf(identity.email).catch((error: unknown) => {
      if (ConnectError.from(error).code === Code.InvalidArgument) return [];
      throw error;
    });
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
    return this.directory.activeMemberships(bound.map((row) => ({ id: row.member_id, email: row.email })));
  }
}
