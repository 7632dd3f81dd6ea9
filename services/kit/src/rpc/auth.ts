import { createHash, timingSafeEqual } from "node:crypto";
import {
  Code,
  ConnectError,
  createContextKey,
  type HandlerContext,
  type Interceptor,
} from "@connectrpc/connect";
import { refuseCompressedBodies } from "./bodies.js";

/** Who is calling, as proven by the internal token it presented. */
export type CallerIdentity = "service" | "executor";

/** Context key under which the auth interceptor leaves the caller's identity for handlers. */
export const callerIdentityKey = createContextKey<CallerIdentity | undefined>(undefined, {
  description: "identity proven by the internal service token",
});

/** The identity of the current call's caller; set for every call that passed the auth interceptor. */
export function callerIdentity(ctx: HandlerContext): CallerIdentity | undefined {
  return ctx.values.get(callerIdentityKey);
}

/** Services anyone may call without a token: probes and discovery carry no secrets. */
const publicServices = new Set(["grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"]);

const digest = (token: string) => createHash("sha256").update(token).digest();

/**
 * Requires `authorization: Bearer <token>` on every call except health and reflection, where the
 * token is one of the configured internal tokens; anything else is UNAUTHENTICATED. The executor
 * identity may call only the methods listed in `executorMethods` ("pkg.Service/Method"):
 * PERMISSION_DENIED elsewhere, so an executor's token is worth little outside its own job.
 *
 * Health and reflection take no compressed request (INVALID_ARGUMENT): they need none, and a caller
 * without a token gets no small body inflated. Token holders may send gzip or brotli; another
 * encoding is INVALID_ARGUMENT too.
 *
 * A request gate (connect's `requestGate`), not an interceptor: it decides from the headers alone,
 * before the request's body is read, decompressed or parsed, so a caller without the token cannot
 * make the service spend memory on a body (docs/security.md, "Resource limits"). connect answers
 * its refusal in the caller's protocol (gRPC status, Connect error).
 */
export function serviceTokenGate(
  tokens: Partial<Record<CallerIdentity, string>>,
  executorMethods: ReadonlySet<string> = new Set(),
): (context: HandlerContext) => void {
  // Compare digests in constant time: the comparison must not leak how much of a guess was right.
  const known = Object.entries(tokens)
    .filter((entry): entry is [CallerIdentity, string] => Boolean(entry[1]))
    .map(([identity, token]) => ({ identity, digest: digest(token) }));
  return (context) => {
    // Anyone may call these, so nobody may have a small compressed body inflated by them.
    if (publicServices.has(context.service.typeName)) return refuseCompressedBodies(context);
    const header = context.requestHeader.get("authorization") ?? "";
    const presented = header.startsWith("Bearer ") ? digest(header.slice("Bearer ".length)) : undefined;
    const match = presented && known.find((k) => timingSafeEqual(k.digest, presented));
    if (!match) throw new ConnectError("missing or invalid service token", Code.Unauthenticated);
    if (
      match.identity === "executor" &&
      !executorMethods.has(`${context.service.typeName}/${context.method.name}`)
    ) {
      throw new ConnectError("executors may not call this method", Code.PermissionDenied);
    }
    refuseCompressedBodies(context, ["gzip", "br"]);
    context.values.set(callerIdentityKey, match.identity);
  };
}

/** Client side: presents this process's token on every call. */
export function bearerTokenInterceptor(token: string): Interceptor {
  return (next) => async (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}
