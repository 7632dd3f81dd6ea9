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

/**
 * The Redis pub/sub channel on which the catalog announces, after the commit and before it answers,
 * a change that takes access away: a member removed or below EDITOR (their keys with them), a
 * project deleted. Grants need no notice: refusals are never cached.
 */
export const accessChangesChannel = "testrun:access:changed";

/** Announces a committed loss of access. Never fails the caller: caches forget within their TTL. */
export async function announceAccessChange(redis: Redis, logger: Logger): Promise<void> {
  try {
    await redis.publish(accessChangesChannel, "");
  } catch (err) {
    logger.warn({ err }, "could not announce an access change; cached grants lapse within their TTL");
  }
}

export interface AccessCacheOptions {
  /** How long a grant is used without asking again, should a notice be lost. */
  ttlMs: number;
  /** Grants kept at most; the oldest go first. */
  maxEntries?: number;
}

/**
 * `requireAccess` with the catalog's grants kept in memory, for services on a hot read path (the
 * runs service's GetRun: a pipeline polling its run asks the same question every few seconds).
 *
 * Losing access stays immediate: the catalog announces every loss on `accessChangesChannel` before
 * its RPC answers, and a notice empties the cache. Should notices be missed, nothing cached is used:
 * the cache serves only while its subscription stands (from SUBSCRIBE's answer until the connection
 * drops), a lookup that started before a notice is not stored after it, and every grant lapses
 * after `ttlMs` regardless. Refusals and errors are never cached, so a grant shows at once too.
 */
export class AccessCache {
  private readonly grants = new Map<string, { answer: CheckAccessResponse; until: number }>();
  private readonly maxEntries: number;
  private subscriber: Redis | undefined;
  private listening = false;
  /** Bumped by every notice and every lost subscription: lookups begun before it are not stored. */
  private generation = 0;

  constructor(
    private readonly catalog: Client<typeof CatalogService>,
    private readonly redis: Redis,
    private readonly logger: Logger,
    private readonly options: AccessCacheOptions,
  ) {
    this.maxEntries = options.maxEntries ?? 10_000;
  }

  /** Subscribes to the catalog's notices; until SUBSCRIBE is answered, every check asks the catalog. */
  start(): void {
    if (this.subscriber || this.options.ttlMs <= 0) return;
    const subscriber = this.redis.duplicate({
      lazyConnect: false,
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
      commandTimeout: undefined,
    });
    this.subscriber = subscriber;
    subscriber.on("message", () => this.forget());
    subscriber.on("error", (err: Error) => this.logger.warn({ err }, "access change notices: Redis failed"));
    // Notices sent while no subscription stood are lost: stop using the cache until it stands again.
    subscriber.on("close", () => {
      this.listening = false;
      this.forget();
    });
    // ioredis subscribes again after a reconnect (autoResubscribe) before it says "ready".
    subscriber.on("ready", () => {
      this.forget();
      this.listening = true;
    });
    subscriber.subscribe(accessChangesChannel).then(
      () => {
        this.forget();
        this.listening = true;
      },
      (err: unknown) => this.logger.warn({ err }, "could not subscribe to access change notices"),
    );
  }

  /** Closes the subscriber connection (shutdown). */
  close(): void {
    this.listening = false;
    // Not QUIT: with Redis away, a queued QUIT would wait for it, and holds nothing worth flushing.
    this.subscriber?.disconnect();
  }

  /** As `requireAccess`: the catalog's answer, or its refusal as a ConnectError. */
  async require(
    actor: Actor | undefined,
    projectId: string,
    permission: Permission,
  ): Promise<CheckAccessResponse> {
    const key = this.listening ? cacheKey(actor, projectId, permission) : undefined;
    if (key === undefined) return requireAccess(this.catalog, actor, projectId, permission);
    const cached = this.grants.get(key);
    const now = performance.now();
    if (cached && cached.until > now) return cached.answer;
    const generation = this.generation;
    const answer = await requireAccess(this.catalog, actor, projectId, permission);
    if (generation === this.generation && this.listening) {
      this.grants.delete(key);
      if (this.grants.size >= this.maxEntries) this.grants.delete(this.grants.keys().next().value as string);
      this.grants.set(key, { answer, until: now + this.options.ttlMs });
    }
    return answer;
  }

  private forget(): void {
    this.generation++;
    this.grants.clear();
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
