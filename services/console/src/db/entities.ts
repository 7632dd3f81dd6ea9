import { defineEntity, p } from "@mikro-orm/core";

// Member ids and emails belong to the catalog's data: plain text columns, no foreign keys across
// schemas. Credentials (session ids, link tokens) are stored only as their SHA-256 hex digest.

/**
 * A console session: a person signed in as the members listed in `session_members` (fixed at
 * sign-in). Whether they are still active, and their roles, are read from the catalog on every call.
 */
export const Session = defineEntity({
  name: "Session",
  tableName: "sessions",
  properties: {
    /** SHA-256 hex of the cookie's value. */
    digest: p.text().primary(),
    email: p.text(),
    /** How the person signed in: "link" or "oidc". */
    method: p.text(),
    createdAt: p.datetime(),
    /** Moved forward at most once a minute (the idle expiry's resolution). */
    lastSeenAt: p.datetime(),
    /** The absolute end: createdAt + SESSION_MAX_HOURS. */
    expiresAt: p.datetime(),
  },
  indexes: [
    // Sweeping ended sessions.
    { name: "sessions_expires_index", properties: ["expiresAt"] },
  ],
  checks: [{ name: "sessions_digest_sha256_hex", expression: "digest ~ '^[0-9a-f]{64}$'" }],
});

/** A member a session acts as; deleted with its session. */
export const SessionMember = defineEntity({
  name: "SessionMember",
  tableName: "session_members",
  properties: {
    session: p.manyToOne(Session).primary().fieldName("session_digest").deleteRule("cascade"),
    memberId: p.text().primary(),
    /** The member's email as the catalog stores it: how it is looked up (FindMembersByEmail). */
    email: p.text(),
  },
  // Ending the sessions of a removed member.
  indexes: [{ name: "session_members_member_index", properties: ["memberId"] }],
});

/**
 * A member bound to an OpenID identity: the issuer and subject of the first verified sign-in with
 * its email. Only that subject signs in as it afterwards (auth/oidc-bindings.ts).
 */
export const OidcBinding = defineEntity({
  name: "OidcBinding",
  tableName: "oidc_bindings",
  properties: {
    memberId: p.text().primary(),
    issuer: p.text(),
    subject: p.text(),
    /** The member's email as the catalog stores it. */
    email: p.text(),
    boundAt: p.datetime(),
  },
  indexes: [{ name: "oidc_bindings_subject_index", properties: ["issuer", "subject"] }],
});

/** A one-time sign-in link for a member (testrunctl member sign-in-link). */
export const SignInLink = defineEntity({
  name: "SignInLink",
  tableName: "sign_in_links",
  properties: {
    /** SHA-256 hex of the link's token. */
    digest: p.text().primary(),
    memberId: p.text(),
    createdAt: p.datetime(),
    expiresAt: p.datetime(),
    /** Set when the link is used; a used link never works again. */
    usedAt: p.datetime().nullable(),
  },
  indexes: [{ name: "sign_in_links_expires_index", properties: ["expiresAt"] }],
  checks: [{ name: "sign_in_links_digest_sha256_hex", expression: "digest ~ '^[0-9a-f]{64}$'" }],
});

export const entities = [Session, SessionMember, SignInLink, OidcBinding];
