import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type { Client } from "@connectrpc/connect";
import type {
  CatalogService,
  CheckAccessResponse,
  Permission,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { requireAccess } from "./access.js";
import { startLoop } from "./background-loop.js";

/**
 * The Redis key holding the access epoch: a random value the catalog replaces, after the commit and
 * before it answers, on every change that can take access away (a member's role changed or removed,
 * a project deleted). Cached grants are kept with the epoch they were granted in, and used only
 * while it is still the current one. Random rather than a counter, so that a value is never issued
 * twice. A Redis restored from an older snapshot could bring an old epoch back: so every cached
 * grant is dropped whenever the connection to Redis drops (any restart or failover does that).
 */
export const accessEpochKey = "testrun:access:epoch";

/**
 * Starts a new access epoch, trying a few times over about a second (a reconnecting Redis refuses
 * commands at once). Never fails the caller, whose change is committed: should every try fail,
 * grants cached before it lapse within their TTL, and the error says so.
 */
export async function announceAccessChange(redis: Redis, logger: Logger): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await redis.set(accessEpochKey, randomUUID());
      return;
    } catch (err) {
      if (attempt === 4) {
        logger.error({ err }, "could not start a new access epoch; cached grants lapse within their TTL");
        return;
      }
      await delay(attempt * 150);
    }
  }
}

/**
 * Keeps an access epoch in Redis (the catalog's job): one is started now and every `intervalMs`
 * when Redis has none (a Redis restarted without persistence), since without one no grant is
 * cached. NX: an epoch that exists is never replaced here. Returns the function that stops it.
 */
export function keepAccessEpoch(redis: Redis, logger: Logger, intervalMs = 30_000): () => Promise<void> {
  const ensure = () =>
    redis.set(accessEpochKey, randomUUID(), "NX").catch((err: unknown) => {
      logger.warn({ err }, "could not check the access epoch; grants are not cached until there is one");
    });
  const loop = startLoop({ name: "access epoch", intervalMs, pass: ensure, logger });
  return () => loop.stop();
}

export interface AccessCacheOptions {
  /** How long a grant is used at most, whatever the epoch says (0: never cached). */
  ttlMs: number;
  /** Grants kept at most; the oldest go first. */
  maxEntries?: number;
  /** How long to wait for the epoch before asking the catalog instead (a Redis that hangs). */
  epochTimeoutMs?: number;
}

/**
 * `requireAccess` with the catalog's grants kept in memory, for a hot read path (the runs service's
 * GetRun: a pipeline polling its run asks the same question every few seconds).
 *
 * Losing access stays immediate: every check reads the access epoch from Redis (one GET, sent in
 * the same write as other requests' commands by auto-pipelining), and a grant counts only if it was
 * given in the current epoch. The catalog starts a new epoch before its RPC that took access away
 * answers, so any check that begins after that answer misses the cache and asks the catalog.
 * Without an epoch (Redis unreachable or slow, the key missing: the catalog starts one, see
 * `keepAccessEpoch`) nothing cached is used. Refusals and errors are never cached, so a new grant
 * shows at once too; and a grant lapses `ttlMs` after it was cached.
 */
export class AccessCache {
  private readonly grants = new Map<string, { answer: CheckAccessResponse; epoch: string; until: number }>();
  private readonly maxEntries: number;
  private readonly epochTimeoutMs: number;

  constructor(
    private readonly catalog: Client<typeof CatalogService>,
    private readonly redis: Redis,
    private readonly logger: Logger,
    private readonly options: AccessCacheOptions,
  ) {
    this.maxEntries = options.maxEntries ?? 10_000;
    this.epochTimeoutMs = options.epochTimeoutMs ?? 250;
    // Whatever Redis says after a reconnect may be an older state (a restored snapshot, a promoted
    // replica): nothing cached before is trusted again.
    redis.on("close", () => this.grants.clear());
  }

  /** As `requireAccess`: the catalog's answer, or its refusal as a ConnectError. */
  async require(
    actor: Actor | undefined,
    projectId: string,
    permission: Permission,
  ): Promise<CheckAccessResponse> {
    const key = this.options.ttlMs > 0 ? cacheKey(actor, projectId, permission) : undefined;
    const epoch = key === undefined ? undefined : await this.currentEpoch();
    if (key === undefined || epoch === undefined)
      return requireAccess(this.catalog, actor, projectId, permission);
    const now = performance.now();
    const cached = this.grants.get(key);
    if (cached && cached.epoch === epoch && cached.until > now) return cached.answer;
    const answer = await requireAccess(this.catalog, actor, projectId, permission);
    // Kept with the epoch read before asking: a loss announced meanwhile leaves it unused.
    this.grants.delete(key);
    if (this.grants.size >= this.maxEntries) this.grants.delete(this.grants.keys().next().value as string);
    this.grants.set(key, { answer, epoch, until: now + this.options.ttlMs });
    return answer;
  }

  /** The current epoch; undefined when there is none, or Redis cannot tell in time. */
  private async currentEpoch(): Promise<string | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.epochTimeoutMs);
    });
    const reading = this.redis.get(accessEpochKey);
    // Should Redis answer (or fail) after the wait was given up, nobody is left to hear it.
    reading.catch(() => undefined);
    try {
      return (await Promise.race([reading, late])) ?? undefined;
    } catch (err) {
      this.logger.debug({ err }, "no access epoch: asking the catalog");
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** What identifies a question to the catalog; undefined for an actor not worth caching. */
function cacheKey(actor: Actor | undefined, projectId: string, permission: Permission): string | undefined {
  const kind = actor?.kind;
  if (kind?.case === "apiKey") {
    const key = kind.value;
    const created = key.keyCreatedAt;
    return `k\0${key.keyId}\0${key.creatorMemberId}\0${key.projectId}\0${created?.seconds}.${created?.nanos}\0${projectId}\0${permission}`;
  }
  if (kind?.case === "memberId") return `m\0${kind.value}\0${projectId}\0${permission}`;
  return undefined;
}
