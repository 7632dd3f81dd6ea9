// A real OpenID provider for the console's sign-in tests (oidc-provider, the certified implementation), on
// a free loopback port. Its development login form takes any login: the login typed is the account,
// and the account's email. The ID token stays minimal (the library's conform mode), so the console
// must read the email from UserInfo, as with providers that do the same.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

export interface TestOidcProvider {
  issuerUrl: string;
  clientId: string;
  clientSecret: string;
  stop(): Promise<void>;
}

/** Starts a provider with one confidential client whose only redirect is the console's callback. */
export async function startOidcProvider(options: {
  redirectUri: string;
  /** Emails the provider does not vouch for (email_verified false). */
  unverified?: string[];
  /** Emails of logins other than the login itself (changed at the provider); read at each sign-in. */
  emails?: Record<string, string>;
}): Promise<TestOidcProvider> {
  const clientId = "testrun-console";
  const clientSecret = "a-test-client-secret-of-enough-length";
  // Listening first: the issuer URL names the port.
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  const issuerUrl = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuerUrl, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({
        sub: id,
        email: options.emails?.[id] ?? id,
        email_verified: !(options.unverified ?? []).includes(id),
        name: id.split("@")[0],
      }),
    }),
    pkce: { required: () => true },
    // Plain http on loopback: tests only.
    cookies: { keys: ["test-cookie-key-0123456789"] },
  });
  provider.proxy = false;
  server.on("request", provider.callback());
  return {
    issuerUrl,
    clientId,
    clientSecret,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
