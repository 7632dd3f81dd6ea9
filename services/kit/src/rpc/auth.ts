import { createHash, timingSafeEqual } from "node:crypto";
import {
  Code,
  ConnectError,
  createContextKey,
  type HandlerContext,
  type Interceptor,
} from "@connectrpc/connect";

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
 */
export function serviceTokenInterceptor(
  tokens: Partial<Record<CallerIdentity, string>>,
  executorMethods: ReadonlySet<string> = new Set(),
): Interceptor {
  // Compare digests in constant time: the comparison must not leak how much of a guess was right.
  const known = Object.entries(tokens)
    .filter((entry): entry is [CallerIdentity, string] => Boolean(entry[1]))
    .map(([identity, token]) => ({ identity, digest: digest(token) }));
  return (next) => async (req) => {
    if (publicServices.has(req.service.typeName)) return next(req);
    const header = req.header.get("authorization") ?? "";
    const presented = header.startsWith("Bearer ") ? digest(header.slice("Bearer ".length)) : undefined;
    const match = presented && known.find((k) => timingSafeEqual(k.digest, presented));
    if (!match) throw new ConnectError("missing or invalid service token", Code.Unauthenticated);
    if (match.identity === "executor" && !executorMethods.has(`${req.service.typeName}/${req.method.name}`)) {
      throw new ConnectError("executors may not call this method", Code.PermissionDenied);
    }
    req.contextValues.set(callerIdentityKey, match.identity);
    return next(req);
  };
}

/** Client side: presents this process's token on every call. */
export function bearerTokenInterceptor(token: string): Interceptor {
  return (next) => async (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}
