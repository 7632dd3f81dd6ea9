import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import type { Logger } from "@testrun/kit";
import * as oidc from "openid-client";
import type { OidcIdentity } from "./oidc-bindings.js";

/** How long a person has at their identity provider before the sign-in must start over. */
export const attemptLifetimeMs = 10 * 60_000;
/** Longest return path an attempt carries (longer ones return to "/"): the cookie stays small. */
export const maxReturnPathLength = 1024;

/** What the callback needs to finish a sign-in, kept in the browser (sealed) until it returns. */
interface Attempt {
  state: string;
  codeVerifier: string;
  nonce: string;
  returnTo: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

export interface OidcSettings {
  issuerUrl: string;
  clientId: string;
  clientSecret: string;
  /** The console's public origin: the redirect URI is `${appUrl}/auth/oidc/callback`. */
  appUrl: string;
}

/** Why a callback did not sign anyone in; each leads the browser to the sign-in page. */
export class OidcFailure extends Error {
  override name = "OidcFailure";
}

/**
 * OpenID Connect sign-in (authorization code flow with PKCE, openid-client) against the issuer an
 * operator configured. The person is the ID token's issuer and subject, with the `email` the
 * provider says it verified (`email_verified: true`); which members that covers is oidc-bindings.ts.
 *
 * Starting a sign-in writes nothing on the server: the attempt (state, PKCE verifier, nonce, return
 * path, end) travels in an HttpOnly cookie sealed with AES-256-GCM under a key derived from the
 * client secret, which every replica has; anyone may start as many as they like at no cost to us.
 */
export class OidcSignIn {
  private configuration: Promise<oidc.Configuration> | undefined;
  readonly redirectUri: string;
  private readonly sealingKey: Buffer;

  constructor(
    private readonly settings: OidcSettings,
    private readonly logger: Logger,
  ) {
    this.redirectUri = `${settings.appUrl}/auth/oidc/callback`;
    this.sealingKey = Buffer.from(
      hkdfSync("sha256", settings.clientSecret, "testrun-console", "oidc sign-in attempt cookie", 32),
    );
  }

  /** The attempt, sealed for its cookie: base64url of IV (12 bytes), ciphertext and tag (16). */
  private seal(attempt: Attempt): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.sealingKey, iv);
    const sealed = Buffer.concat([cipher.update(JSON.stringify(attempt), "utf8"), cipher.final()]);
    return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString("base64url");
  }

  /** The attempt a cookie holds, or undefined when it was not sealed here, was altered, or is malformed. */
  private open(cookie: string | undefined): Attempt | undefined {
    if (!cookie || cookie.length > 4096) return undefined;
    try {
      const bytes = Buffer.from(cookie, "base64url");
      const decipher = createDecipheriv("aes-256-gcm", this.sealingKey, bytes.subarray(0, 12));
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      const text = Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]);
      return JSON.parse(text.toString("utf8")) as Attempt;
    } catch {
      return undefined;
    }
  }

  /** The provider's host, to name it on the sign-in button. */
  get providerName(): string {
    return new URL(this.settings.issuerUrl).host;
  }

  /** Discovery happens on first use and again after a failure: a provider down at start is no reason to exit. */
  private config(): Promise<oidc.Configuration> {
    if (!this.configuration) {
      const { issuerUrl, clientId, clientSecret } = this.settings;
      const insecure = new URL(issuerUrl).protocol === "http:";
      this.configuration = oidc
        // client_secret_basic: the method every provider must support (RFC 6749, 2.3.1).
        .discovery(new URL(issuerUrl), clientId, undefined, oidc.ClientSecretBasic(clientSecret), {
          // Plain http only when the operator configured an http issuer (local or test providers).
          ...(insecure && { execute: [oidc.allowInsecureRequests] }),
        })
        .catch((error: unknown) => {
          this.configuration = undefined;
          throw error;
        });
    }
    return this.configuration;
  }

  /** Starts a sign-in: the provider URL to send the browser to, and the sealed attempt for its cookie. */
  async start(returnTo: string): Promise<{ url: URL; cookie: string }> {
    const config = await this.config();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const cookie = this.seal({
      state,
      codeVerifier,
      nonce,
      returnTo: returnTo.length <= maxReturnPathLength ? returnTo : "/",
      expiresAt: Date.now() + attemptLifetimeMs,
    });
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      scope: "openid email profile",
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      state,
      nonce,
    });
    return { url, cookie };
  }

  /**
   * Finishes a sign-in from the provider's redirect (`query` is the callback's query string) in the
   * browser holding the attempt's cookie. Returns who signed in and where to go. The cookie is
   * cleared by the callback, and the provider takes an authorization code once.
   */
  async finish(
    query: string,
    attemptCookie: string | undefined,
  ): Promise<{ identity: OidcIdentity; returnTo: string }> {
    const params = new URLSearchParams(query);
    const state = params.get("state");
    const attempt = this.open(attemptCookie);
    if (!state || !attempt || attempt.state !== state)
      throw new OidcFailure("state missing or not this browser's");
    if (attempt.expiresAt <= Date.now()) throw new OidcFailure("the sign-in took too long");
    if (params.has("error")) throw new OidcFailure(`the provider refused: ${params.get("error")}`);

    let identity: Record<string, unknown>;
    let issuer: string;
    let subject: string;
    try {
      const config = await this.config();
      const tokens = await oidc.authorizationCodeGrant(config, new URL(`${this.redirectUri}?${query}`), {
        pkceCodeVerifier: attempt.codeVerifier,
        expectedState: state,
        expectedNonce: attempt.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!claims) throw new OidcFailure("no ID token");
      issuer = claims.iss;
      subject = claims.sub;
      identity = { ...claims };
      // Providers that keep the ID token minimal give the email at the UserInfo endpoint instead.
      if (typeof claims.email !== "string")
        identity = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
    } catch (error) {
      // The provider's answer, never the code or tokens (they are not in these errors' messages).
      const { name, message } = error as Error;
      this.logger.warn({ err: { name, message } }, "oidc code exchange failed");
      throw new OidcFailure("code exchange failed");
    }
    const { email, email_verified: verified } = identity;
    if (typeof email !== "string" || !email.includes("@") || verified !== true)
      throw new OidcFailure("the provider vouches for no verified email");
    return { identity: { issuer, subject, email }, returnTo: attempt.returnTo };
  }
}
