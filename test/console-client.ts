// Talking to the console as a browser does, for the console's end-to-end and browser tests:
// sign-in links made with testrunctl's code, the session cookie, and ConsoleService through a real
// Connect client over HTTP/1.1.
import { type Client, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { createCliContext, createSignInLink } from "@testrun/cli";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import type { System } from "../scripts/system.js";

/** A one-time sign-in link's token for a member, as `testrunctl member sign-in-link` makes it. */
export async function signInLinkOf(
  system: System,
  memberId: string,
): Promise<{ url: string; token: string }> {
  const { url } = await createSignInLink(createCliContext(system.env), { memberId });
  return { url, token: url.slice(url.indexOf("#") + 1) };
}

/** Uses a sign-in link's token; the answer as it comes. */
export const redeemLink = (system: System, token: string, headers: Record<string, string> = {}) =>
  fetch(`${system.consoleUrl}/auth/link`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ token }),
  });

/** Signs a member in with a fresh link; the `name=value` of the session cookie. */
export async function signIn(system: System, memberId: string): Promise<string> {
  const answer = await redeemLink(system, (await signInLinkOf(system, memberId)).token);
  if (answer.status !== 204) throw new Error(`sign-in link refused: ${answer.status} ${await answer.text()}`);
  return sessionCookieOf(answer);
}

export function sessionCookieOf(answer: Response): string {
  const cookie = answer.headers.getSetCookie().find((c) => c.startsWith("testrun_session="));
  if (!cookie) throw new Error("no session cookie set");
  return cookie.split(";")[0] ?? "";
}

/** ConsoleService as the browser calls it, carrying a session cookie (or none). */
export function consoleClient(system: System, cookie?: string): Client<typeof ConsoleService> {
  return createClient(
    ConsoleService,
    createConnectTransport({
      baseUrl: `${system.consoleUrl}/api`,
      httpVersion: "1.1",
      interceptors: [
        (next) => (req) => {
          if (cookie) req.header.set("cookie", cookie);
          return next(req);
        },
      ],
    }),
  );
}

/** The error a call failed with; fails the test when the call succeeded. */
export async function refusal(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("the call succeeded");
}
