import type { IncomingHttpHeaders } from "node:http";
import { create } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { type ApiKeyActor, ApiKeyActorSchema } from "@testrun/gen/testrun/common/v1/actor_pb";
import { type KeysService, VerifyKeyResult } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { fingerprintOf, type KeyCacheEntry } from "@testrun/kit";
import type Koa from "koa";
import { type ContentToken, callOptions, type GatewayContext, type GatewayState } from "./context.js";
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
/** A content token's (docs/keys.md, "Content tokens"): the same after `trc_`. */
const contentTokenShape = /^trc_[0-9A-Za-z]{46}$/;

/** Why a presented key does not work, as the client is told. */
type Refusal =
  | "missing"
  | "malformed_header"
  | "unknown"
  | "revoked"
  | "expired"
  | "creator_lost_rights"
  /** A content token where an API key belongs, or an API key where a content token does. */
  | "wrong_kind";

type Verdict<T = ApiKeyActor> = { ok: true; key: T; fromCache: boolean } | { ok: false; refusal: Refusal };

/** What a request presents: an API key (every /v1 operation) or a content token (the content import). */
type Credential = "key" | "content_token";

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

type RefusalTexts = Record<
  Exclude<Refusal, "creator_lost_rights">,
  { code: "unauthorized" | "key_expired"; message: string }
>;

const refusals: Record<Credential, RefusalTexts> = {
  key: {
    missing: {
      code: "unauthorized",
      message: 'an API key is required: send "Authorization: Bearer <key>" or "X-Api-Key: <key>"',
    },
    malformed_header: { code: "unauthorized", message: 'the Authorization header must be "Bearer <key>"' },
    unknown: { code: "unauthorized", message: "invalid API key" },
    revoked: { code: "unauthorized", message: "the API key was revoked" },
    expired: { code: "key_expired", message: "the API key has expired" },
    wrong_kind: {
      code: "unauthorized",
      message:
        "a content token (trc_…) only imports content (POST /v1/content/import); this request needs an API key (trk_…)",
    },
  },
  content_token: {
    missing: {
      code: "unauthorized",
      message: 'a content token is required: send "Authorization: Bearer <token>" or "X-Api-Key: <token>"',
    },
    malformed_header: { code: "unauthorized", message: 'the Authorization header must be "Bearer <token>"' },
    unknown: { code: "unauthorized", message: "invalid content token" },
    revoked: { code: "unauthorized", message: "the content token was revoked" },
    expired: { code: "key_expired", message: "the content token has expired" },
    wrong_kind: {
      code: "unauthorized",
      message:
        "an API key (trk_…) cannot import content: use a content token (trc_…), which an Editor creates in the console's API & CI",
    },
  },
};

function creatorLostRights(purpose: Purpose | "import"): HttpError {
  if (purpose === "import") return contentTokenCreatorLostRights();
  return new HttpError(
    403,
    "forbidden",
    purpose === "start_run"
      ? "the key's creator can no longer start runs"
      : "the key's creator is no longer an Editor or above, so the key no longer works; create a new key",
  );
}

/** The 403 of a content token whose creator is no longer an Editor or above of its project. */
export const contentTokenCreatorLostRights = (): HttpError =>
  new HttpError(
    403,
    "forbidden",
    "the content token's creator is no longer an Editor or above in this project, so the token no longer works; an Editor creates a new one",
  );

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
  keys: Pick<Client<typeof KeysService>, "verifyKey" | "verifyContentToken">;
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

  /**
   * Koa middleware that lets only requests with a working content token through, as
   * `ctx.state.contentToken`: the content import's check. The same limits as keys (the token's
   * 60 requests a minute, its address's failures), no cache: every import asks the keys service.
   */
  requireContentToken(): Koa.Middleware<GatewayState> {
    return async (ctx, next) => {
      const address = clientAddressKey(ctx.ip);
      const presented = await this.presented(ctx, address, "content_token");
      if (keyShape.test(presented)) return this.refuse(address, "wrong_kind", "content_token");
      if (!contentTokenShape.test(presented)) return this.refuse(address, "unknown", "content_token");
      const checked = await this.checked(ctx, address, presented, "import", (secret) =>
        this.verifyContentToken(ctx, secret),
      );
      ctx.state.contentToken = checked.key;
      await next();
    };
  }

  /** The secret a request presents; refused (and counted) when there is none or the header is not a bearer's. */
  private async presented(ctx: GatewayContext, address: string, credential: Credential): Promise<string> {
    const presented = presentedKey(ctx.headers);
    if (presented === undefined) return this.refuse(address, "missing", credential);
    if (typeof presented !== "string") return this.refuse(address, "malformed_header", credential);
    return presented;
  }

  private async authenticate(ctx: GatewayContext, purpose: Purpose): Promise<ApiKeyActor> {
    const address = clientAddressKey(ctx.ip);
    const presented = await this.presented(ctx, address, "key");
    // Said in so many words: a pipeline that took the wrong secret is told which one it needs.
    if (contentTokenShape.test(presented)) return this.refuse(address, "wrong_kind");
    if (!keyShape.test(presented)) return this.refuse(address, "unknown");
    const { key, fromCache } = await this.checked(ctx, address, presented, purpose, (secret) =>
      this.verify(ctx, secret),
    );
    if (fromCache) this.deps.uses.note(key.keyId);
    return key;
  }

  /**
   * A well-shaped secret through the limits, the cache (API keys only: the keys service never
   * caches a content token) and the keys service.
   */
  private async checked<T>(
    ctx: GatewayContext,
    address: string,
    presented: string,
    purpose: Purpose | "import",
    verifyWith: (secret: string) => Promise<Verdict<T>>,
  ): Promise<{ key: T; fromCache: boolean }> {
    const credential: Credential = purpose === "import" ? "content_token" : "key";
    const fingerprint = fingerprintOf(presented);
    const check = await this.deps.limits.checkKey(fingerprint, address);
    if (check.blocked) throw tooManyFailures(check.retryAfterSeconds);

    const cached =
      credential === "key" && check.entry
        ? (verdictFromCache(check.entry, Date.now()) as Verdict<T> | undefined)
        : undefined;
    if (!cached && check.rate.count > check.rate.limit) {
      // The per-key limit applies to a secret before it is verified too: however parallel the
      // burst (requests sharing one failure count, see limits.ts), one secret is verified by the
      // keys service at most `limit` times a minute. A valid key over its limit gets this 429 anyway.
      if (check.advance === "counted") await this.deps.limits.notVerified(address, fingerprint);
      setRateHeaders(ctx, check.rate);
      throw rateLimited(check.rate);
    }
    let verdict: Verdict<T>;
    if (cached) verdict = cached;
    else {
      try {
        verdict = await verifyWith(presented);
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
      if (check.advance !== "none") throw unauthorized(verdict.refusal, credential);
      return this.refuse(address, verdict.refusal, credential);
    }

    setRateHeaders(ctx, check.rate);
    if (check.rate.count > check.rate.limit) throw rateLimited(check.rate);
    return verdict;
  }

  /** Asks the keys service whether a content token works (it records the use itself). */
  private async verifyContentToken(ctx: GatewayContext, secret: string): Promise<Verdict<ContentToken>> {
    let response: Awaited<ReturnType<AuthenticatorDeps["keys"]["verifyContentToken"]>>;
    try {
      response = await this.deps.keys.verifyContentToken({ secret }, callOptions(ctx));
    } catch (error) {
      ctx.state.log.error(
        { err: error, rpc: "KeysService/VerifyContentToken" },
        "content token verification failed",
      );
      throw internalError();
    }
    switch (response.result) {
      case VerifyKeyResult.VALID:
        return {
          ok: true,
          fromCache: false,
          key: {
            tokenId: response.tokenId,
            projectId: response.projectId,
            creatorMemberId: response.creatorMemberId,
          },
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
    verdict: Verdict<unknown>,
  ): Promise<void> {
    if (verdict.ok || verdict.refusal === "creator_lost_rights")
      await this.deps.limits.keyExists(address, fingerprint, advance === "counted");
    else if (advance === "none") await this.deps.limits.forgetKey(fingerprint);
    else if (advance === "counted") await this.deps.limits.refusedCounted(address, fingerprint);
  }

  /** Counts a failed authentication of the address and answers 401, or 429 once it is over its limit. */
  private async refuse(
    address: string,
    refusal: Exclude<Refusal, "creator_lost_rights">,
    credential: Credential = "key",
  ): Promise<never> {
    const failures = await this.deps.limits.recordAuthFailure(address);
    if (failures.blocked) throw tooManyFailures(failures.retryAfterSeconds);
    throw unauthorized(refusal, credential);
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

function unauthorized(
  refusal: Exclude<Refusal, "creator_lost_rights">,
  credential: Credential = "key",
): HttpError {
  const { code, message } = refusals[credential][refusal];
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
