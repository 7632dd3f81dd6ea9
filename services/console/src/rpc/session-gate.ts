import type { HandlerContext } from "@connectrpc/connect";
import { refuseCompressedBodies, unparsableBodyIsInvalidArgument } from "@testrun/kit";
import { sessionCookieKey, signedOut } from "../viewer.js";

/**
 * ConsoleService methods that answer without a session: the sign-in page's own, and the question
 * whether anyone is signed in (GetSession answers "nobody", reading nothing).
 */
export const methodsWithoutSession: ReadonlySet<string> = new Set(["GetSignInOptions", "GetSession"]);

/**
 * The console API's request gate (connect's `requestGate`): runs on the headers alone, before the
 * body is read or parsed. A call needing a session that carries no session cookie is refused
 * UNAUTHENTICATED there, as the handler would refuse it, so an anonymous request costs the console
 * no body (docs/security.md, "Resource limits"). Whether a cookie names a live session is the
 * handlers' question (Viewers.of): a made-up cookie gets its body read, within the API's bound.
 * Browsers never compress what they send (connect-web cannot): a compressed request is refused.
 */
export function consoleRequestGate(context: HandlerContext): void {
  unparsableBodyIsInvalidArgument(context);
  if (!methodsWithoutSession.has(context.method.name) && !context.values.get(sessionCookieKey))
    throw signedOut();
  refuseCompressedBodies(context);
}
