import type { EntityManager } from "@mikro-orm/postgresql";
import { dbDate, type Logger, type Orm } from "@testrun/kit";
import * as oidc from "openid-client";
import { digestOf } from "./credentials.js";

/** How long a person has at their identity provider before the sign-in must start over. */
const attemptLifetimeMs = 10 * 60_000;

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
 * operator configured. The person is identified by the ID token's `email` claim, and only when the
 * provider says it verified it (`email_verified: true`).
 */
export class OidcSignIn {
  private configuration: Promise<oidc.Configuration> | undefined;
  readonly redirectUri: string;

  constructor(
    private readonly settings: OidcSettings,
    private readonly orm: Orm,
    private readonly logger: Logger,
  ) {
    this.redirectUri = `${settings.appUrl}/auth/oidc/callback`;
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

  private em(): EntityManager {
    return this.orm.em.fork();
  }

  /** Starts a sign-in: the provider URL to send the browser to, and the state the browser must keep. */
  async start(returnTo: string): Promise<{ url: URL; state: string }> {
    const config = await this.config();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    await this.em().execute(
      `insert into console.oidc_attempts (state_digest, code_verifier, nonce, return_to, expires_at)
       values (?, ?, ?, ?, ?)`,
      [digestOf(state), codeVerifier, nonce, returnTo, new Date(Date.now() + attemptLifetimeMs)],
    );
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri,
      scope: "openid email profile",
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      state,
      nonce,
    });
    return { url, state };
  }

  /**
   * Finishes a sign-in from the provider's redirect (`query` is the callback's query string) in the
   * browser holding `stateCookie`. Returns the verified email and where to go; an attempt is usable once.
   */
  async finish(query: string, stateCookie: string | undefined): Promise<{ email: string; returnTo: string }> {
    const params = new URLSearchParams(query);
    const state = params.get("state");
    if (!state || state !== stateCookie) throw new OidcFailure("state missing or not this browser's");
    const [attempt] = await this.em().execute<
      { code_verifier: string; nonce: string; return_to: string; expires_at: Date | string }[]
    >(
      "delete from console.oidc_attempts where state_digest = ? returning code_verifier, nonce, return_to, expires_at",
      [digestOf(state)],
    );
    if (!attempt || dbDate(attempt.expires_at) <= new Date())
      throw new OidcFailure("no such sign-in under way");
    if (params.has("error")) throw new OidcFailure(`the provider refused: ${params.get("error")}`);

    let identity: Record<string, unknown>;
    try {
      const config = await this.config();
      const tokens = await oidc.authorizationCodeGrant(config, new URL(`${this.redirectUri}?${query}`), {
        pkceCodeVerifier: attempt.code_verifier,
        expectedState: state,
        expectedNonce: attempt.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      identity = { ...claims };
      // Providers that keep the ID token minimal give the email at the UserInfo endpoint instead.
      if (claims && typeof claims.email !== "string")
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
    return { email, returnTo: attempt.return_to };
  }
}
