import { defineEntity, p } from "@mikro-orm/core";

// Member ids and emails belong to the catalog's data: plain text columns, no foreign keys across
// schemas. Credentials (session ids, link tokens) are stored only as their SHA-256 hex digest.

/**
 * A console session: a person signed in with an email. Which organizations and roles that gives is
 * read from the catalog on every call, so removing a member takes effect at once.
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
    // Ending every session of a person whose last membership went.
    {
      name: "sessions_email_index",
      expression: (c, t, n) => `create index "${n}" on ${t} (lower("${c.email}"))`,
    },
    // Sweeping ended sessions.
    { name: "sessions_expires_index", properties: ["expiresAt"] },
  ],
  checks: [{ name: "sessions_digest_sha256_hex", expression: "digest ~ '^[0-9a-f]{64}$'" }],
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

/**
 * An OpenID Connect sign-in under way: what the callback needs to finish it (the PKCE verifier,
 * the nonce, where to return). Keyed by the digest of the `state` parameter, which the browser
 * also holds in a cookie, so a callback only completes in the browser that started it.
 */
export const OidcAttempt = defineEntity({
  name: "OidcAttempt",
  tableName: "oidc_attempts",
  properties: {
    stateDigest: p.text().primary(),
    codeVerifier: p.text(),
    nonce: p.text(),
    /** A path of the console (never another origin) to return to after sign-in. */
    returnTo: p.text(),
    expiresAt: p.datetime(),
  },
  indexes: [{ name: "oidc_attempts_expires_index", properties: ["expiresAt"] }],
});

export const entities = [Session, SignInLink, OidcAttempt];
