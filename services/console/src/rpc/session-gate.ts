import type { HandlerContext } from "@connectrpc/connect";
import { refuseCompressedBodies, unparsableBodyIsInvalidArgument } from "@testrun/kit";
import { resolvedViewerKey, sessionCookieKey, signedOut, type Viewers } from "../viewer.js";

/**
 * ConsoleService methods that answer without a session: the sign-in page's own, and the question
 * whether anyone is signed in (GetSession answers "nobody", reading nothing).
 */
export const methodsWithoutSession: ReadonlySet<string> = new Set(["GetSignInOptions", "GetSession"]);

/**
 * The console API's request gate (connect's `requestGate`): runs on the headers alone, before the
 * body is read or parsed. A call needing a session is refused UNAUTHENTICATED there, as the handler
 * would refuse it, when it carries no session cookie, or (given `viewers`) one that names no live
 * session: an anonymous or made-up request costs the console no body, and its connection closes
 * (docs/security.md, "Resource limits"). The viewer it resolved is the handler's (`resolvedViewerKey`),
 * so a session is read once per call as before. Browsers never compress what they send
 * (connect-web cannot): a compressed request is refused.
 */
export async function consoleRequestGate(
  context: HandlerContext,
  viewers?: Pick<Viewers, "ofSession">,
): Promise<void> {
  unparsableBodyIsInvalidArgument(context);
  const needsSession = !methodsWithoutSession.has(context.method.name);
  const cookie = context.values.get(sessionCookieKey);
  if (needsSession && !cookie) throw signedOut();
  refuseCompressedBodies(context);
  if (needsSession && viewers) context.values.set(resolvedViewerKey, await viewers.ofSession(cookie));
}
