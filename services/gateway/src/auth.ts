import type { IncomingHttpHeaders } from "node:http";
import { create } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { type ApiKeyActor, ApiKeyActorSchema } from "@testrun/gen/testrun/common/v1/actor_pb";
import { type KeysService, VerifyKeyResult } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { fingerprintOf, type KeyCacheEntry } from "@testrun/kit";
import type Koa from "koa";
import { callOptions, type GatewayContext, type GatewayState } from "./context.js";
import { HttpError, internalError } from "./http-error.js";
import type { KeyUseRecorder } from "./key-use.js";
import { clientAddressKey, type RateState, type RequestLimits } from "./limits.js";

/** What a request wants to do with its key: the 403 for a creator who lost rights says so. */
export type Purpose = "read" | "start_run";

/**
 * The secret format of docs/keys.md: `trk_`, 40 random and 6 checksum characters, all base62.
 * Anything else cannot be a key, so it is refused without asking the keys service.
 */
const keyShape = /^trk_[0-9A-Za-z]{46}$/;

/** Why a presented key does not work, as the client is told. */
type Refusal = "missing" | "malformed_header" | "unknown" | "revoked" | "expired" | "creator_lost_rights";

type Verdict = { ok: true; key: ApiKeyActor; fromCache: boolean } | { ok: false; refusal: Refusal };

/**
 * The key a request presents: `Authorization: Bearer <key>` or `X-Api-Key: <key>`. Undefined when
 * there is none; `{ malformed }` when the only candidate is an Authorization header that is not a
 * bearer key (with X-Api-Key present, another scheme in Authorization is left to whoever uses it).
 */
export function presentedKey(headers: IncomingHttpHeaders): string | undefined | { malformed: true } {
  const apiKeyHeader = headers["x-api-key"];
  const fromApiKey = (Array.isArray(apiKeyHeader) ? apiKeyHeader[0] : apiKeyHeader)?.trim() || undefined;
  const authorization = headers.authorization?.trim();
  const fromBearer = authorization ? /^Bearer +(\S+)$/i.exec(authorization)?.[1] : undefined;
  if (authorization && !fromBearer && !fromApiKey) return { malformed: true };
  if (fromBearer && fromApiKey && fromBearer !== fromApiKey) {
    throw new HttpError(
      400,
      "invalid_request",
      "the Authorization and X-Api-Key headers carry different keys; send the key in one of them",
    );
  }
  return fromBearer ?? fromApiKey;
}

const refusals: Record<
  Exclude<Refusal, "creator_lost_rights">,
  { code: "unauthorized" | "key_expired"; message: string }
> = {
  missing: {
    code: "unauthorized",
    message: 'an API key is required: send "Authorization: Bearer <key>" or "X-Api-Key: <key>"',
  },
  malformed_header: { code: "unauthorized", message: 'the Authorization header must be "Bearer <key>"' },
  unknown: { code: "unauthorized", message: "invalid API key" },
  revoked: { code: "unauthorized", message: "the API key was revoked" },
  expired: { code: "key_expired", message: "the API key has expired" },
};

function creatorLostRights(purpose: Purpose): HttpError {
  return new HttpError(
    403,
    "forbidden",
    purpose === "start_run"
      ? "the key's creator can no longer start runs"
      : "the key's creator is no longer an Editor or above, so the key no longer works; create a new key",
  );
}

const keyActor = (fields: {
  keyId: string;
  projectId: string;
  creatorMemberId: string;
  keyCreatedAt: Timestamp | undefined;
}): ApiKeyActor => create(ApiKeyActorSchema, fields);

/** What the verified-key cache says, without asking anyone; undefined for an entry we cannot read. */
function verdictFromCache(entry: KeyCacheEntry, now: number): Verdict | undefined {
  switch (entry.state) {
    case "revoked":
      return { ok: false, refusal: "revoked" };
    case "creator_lost_rights":
      return { ok: false, refusal: "creator_lost_rights" };
    case "valid":
      if (entry.expiresAt && Date.parse(entry.expiresAt) <= now) return { ok: false, refusal: "expired" };
      return {
        ok: true,
        fromCache: true,
        key: keyActor({
          keyId: entry.keyId,
          projectId: entry.projectId,
          creatorMemberId: entry.creatorMemberId,
          keyCreatedAt: timestampFromDate(new Date(entry.keyCreatedAt)),
        }),
      };
    default:
      return undefined;
  }
}

export interface AuthenticatorDeps {
  limits: RequestLimits;
  keys: Pick<Client<typeof KeysService>, "verifyKey">;
  uses: KeyUseRecorder;
}

/**
 * Authenticates requests by their project API key and applies the per-key rate limit and the
 * per-address limit on failed authentications (docs/rest-api.md, "Authentication", "Limits").
 *
 * Cost per request: one Redis round trip (limits.checkKey), plus, only when the cache has no
 * entry for the key, a VerifyKey call (the keys service then writes one) and one round trip to
 * settle the failure counted in advance (limits.ts says how failures are counted, and why a key
 * known to be real is never held up by its address's failures). Refusals cost one more round
 * trip to count them. The secret itself is only ever fingerprinted or sent to VerifyKey.
 */
export class Authenticator {
  constructor(private readonly deps: AuthenticatorDeps) {}

  /** Koa middleware that lets only requests with a working key through, as `ctx.state.key`. */
  require(purpose: Purpose): Koa.Middleware<GatewayState> {
    return async (ctx, next) => {
      ctx.state.key = await this.authenticate(ctx, purpose);
      await next();
    };
  }

  private async authenticate(ctx: GatewayContext, purpose: Purpose): Promise<ApiKeyActor> {
    const address = clientAddressKey(ctx.ip);
    const presented = presentedKey(ctx.headers);
    if (presented === undefined) return this.refuse(address, "missing");
    if (typeof presented !== "string") return this.refuse(address, "malformed_header");
    if (!keyShape.test(presented)) return this.refuse(address, "unknown");

    const fingerprint = fingerprintOf(presented);
    const check = await this.deps.limits.checkKey(fingerprint, address);
    if (check.blocked) throw tooManyFailures(check.retryAfterSeconds);

    const cached = check.entry && verdictFromCache(check.entry, Date.now());
    if (!cached && check.rate.count > check.rate.limit) {
      // The per-key limit applies to a secret before it is verified too: however parallel the
      // burst (requests sharing one failure count, see limits.ts), one secret is verified by the
      // keys service at most `limit` times a minute. A valid key over its limit gets this 429 anyway.
      if (check.advance === "counted") await this.deps.limits.notVerified(address, fingerprint);
      setRateHeaders(ctx, check.rate);
      throw rateLimited(check.rate);
    }
    let verdict: Verdict;
    if (cached) verdict = cached;
    else {
      try {
        verdict = await this.verify(ctx, presented);
      } catch (error) {
        // Verifying failed on our side: not the client's failure.
        if (check.advance === "counted") await this.deps.limits.notVerified(address, fingerprint);
        throw error;
      }
      await this.settle(address, fingerprint, check.advance, verdict);
    }
    if (!verdict.ok) {
      if (verdict.refusal === "creator_lost_rights") throw creatorLostRights(purpose);
      // Counted before verifying (by this request or one with the same secret): once is enough.
      if (check.advance !== "none") throw unauthorized(verdict.refusal);
      return this.refuse(address, verdict.refusal);
    }

    setRateHeaders(ctx, check.rate);
    if (check.rate.count > check.rate.limit) throw rateLimited(check.rate);
    if (verdict.fromCache) this.deps.uses.note(verdict.key.keyId);
    return verdict.key;
  }

  /** Asks the keys service, which also caches the answer for the next requests. */
  private async verify(ctx: GatewayContext, secret: string): Promise<Verdict> {
    let response: Awaited<ReturnType<AuthenticatorDeps["keys"]["verifyKey"]>>;
    try {
      response = await this.deps.keys.verifyKey({ secret }, callOptions(ctx));
    } catch (error) {
      // VerifyKey fails only for transport reasons (keys unreachable, deadline): our fault, a 500.
      ctx.state.log.error({ err: error, rpc: "KeysService/VerifyKey" }, "key verification failed");
      throw internalError();
    }
    switch (response.result) {
      case VerifyKeyResult.VALID:
        return {
          ok: true,
          fromCache: false,
          key: keyActor({
            keyId: response.keyId,
            projectId: response.projectId,
            creatorMemberId: response.creatorMemberId,
            keyCreatedAt: response.keyCreatedAt,
          }),
        };
      case VerifyKeyResult.EXPIRED:
        return { ok: false, refusal: "expired" };
      case VerifyKeyResult.REVOKED:
        return { ok: false, refusal: "revoked" };
      case VerifyKeyResult.CREATOR_LOST_RIGHTS:
        return { ok: false, refusal: "creator_lost_rights" };
      default:
        return { ok: false, refusal: "unknown" };
    }
  }

  /**
   * After the keys service's answer: a key that exists takes back the failure counted in advance
   * and is marked known; a marked key that no longer works loses its mark (and is counted as it
   * is refused); a refused secret that was counted in advance stays counted.
   */
  private async settle(
    address: string,
    fingerprint: string,
    advance: "none" | "counted" | "shared",
    verdict: Verdict,
  ): Promise<void> {
    if (verdict.ok || verdict.refusal === "creator_lost_rights")
      await this.deps.limits.keyExists(address, fingerprint, advance === "counted");
    else if (advance === "none") await this.deps.limits.forgetKey(fingerprint);
    else if (advance === "counted") await this.deps.limits.refusedCounted(address, fingerprint);
  }

  /** Counts a failed authentication of the address and answers 401, or 429 once it is over its limit. */
  private async refuse(address: string, refusal: Exclude<Refusal, "creator_lost_rights">): Promise<never> {
    const failures = await this.deps.limits.recordAuthFailure(address);
    if (failures.blocked) throw tooManyFailures(failures.retryAfterSeconds);
    throw unauthorized(refusal);
  }
}

function rateLimited(rate: RateState): HttpError {
  return new HttpError(
    429,
    "rate_limited",
    `rate limit exceeded: this key may make ${rate.limit} requests a minute; retry in ${rate.resetSeconds} s`,
    {},
    { "Retry-After": String(rate.resetSeconds) },
  );
}

function unauthorized(refusal: Exclude<Refusal, "creator_lost_rights">): HttpError {
  const { code, message } = refusals[refusal];
  return new HttpError(401, code, message);
}

function tooManyFailures(retryAfterSeconds: number): HttpError {
  return new HttpError(
    429,
    "rate_limited",
    `too many failed authentications from this address; retry in ${retryAfterSeconds} s`,
    {},
    { "Retry-After": String(retryAfterSeconds) },
    "auth_failures",
  );
}

/** The RateLimit-* headers of every response to a working key (IETF draft, delta seconds). */
function setRateHeaders(ctx: GatewayContext, rate: RateState): void {
  ctx.set("RateLimit-Limit", String(rate.limit));
  ctx.set("RateLimit-Remaining", String(Math.max(0, rate.limit - rate.count)));
  ctx.set("RateLimit-Reset", String(rate.resetSeconds));
}
