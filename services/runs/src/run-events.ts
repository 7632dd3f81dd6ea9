import type { Redis } from "ioredis";
import type { Logger } from "pino";

/** The Redis pub/sub channel on which replicas announce a run they changed; the payload is its id. */
export const runChangesChannel = "testrun:runs:changed";

/** How long a change waits for others of its run before it is announced. */
const noticeDelayMs = 10;

/**
 * Change notices of runs, across replicas, for WatchRun. A notice only says "read this run again":
 * PostgreSQL holds what changed, and watchers read their run again every few seconds anyway, so a
 * lost notice (Redis down, a reconnect) delays a stream and never corrupts it.
 *
 * Each process holds one subscriber connection (a connection in subscriber mode takes no other
 * commands), opened when the first watcher arrives and shared by all of them: notices are fanned
 * out in-process to the listeners of the run they name.
 */
export class RunEvents {
  private readonly listeners = new Map<string, Set<() => void>>();
  private subscriber: Redis | undefined;
  private closed = false;
  /** Runs changed since the last publication, announced together when `timer` fires. */
  private readonly due = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
  ) {}

  /**
   * Announces a committed change of a run, at most `noticeDelayMs` later, once for every change of
   * the run meanwhile (a run whose tests end 200 times a second costs a publication every 10 ms,
   * not 400 a second; its watchers read it at most every WATCH_READ_SPACING_MS anyway). Resolves
   * at once: the caller never waits for Redis, and a failure only delays the watchers, who read
   * the run again soon.
   */
  async changed(runId: string): Promise<void> {
    this.due.add(runId);
    this.timer ??= setTimeout(() => void this.announce(), noticeDelayMs);
  }

  /** Calls `listener` whenever `runId` may have changed, until the returned function is called. */
  listen(runId: string, listener: () => void): () => void {
    this.subscribe();
    let set = this.listeners.get(runId);
    if (!set) {
      set = new Set();
      this.listeners.set(runId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(runId) === set) this.listeners.delete(runId);
    };
  }

  /** Announces what is due now and closes the subscriber connection (shutdown); nothing is heard afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    await this.announce();
    // Not QUIT: with Redis away, a queued QUIT would wait for it, and holds nothing worth flushing.
    this.subscriber?.disconnect();
  }

  private subscribe(): void {
    if (this.subscriber || this.closed) return;
    // Unlike the command connection, this one queues its SUBSCRIBE until Redis answers, however
    // long that takes, and subscribes again after every reconnect (ioredis' autoResubscribe).
    const subscriber = this.redis.duplicate({
      lazyConnect: false,
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
      commandTimeout: undefined,
    });
    this.subscriber = subscriber;
    subscriber.on("message", (_channel: string, runId: string) => this.notify(runId));
    subscriber.on("error", (err: Error) => this.logger.warn({ err }, "run change notices: Redis failed"));
    // Notices sent while no subscription stood were lost: every watcher reads its run again.
    subscriber.on("ready", () => this.notifyAll());
    subscriber.subscribe(runChangesChannel).then(
      () => this.notifyAll(),
      (err: unknown) => this.logger.warn({ err }, "could not subscribe to run change notices"),
    );
  }

  /** Publishes the notices due, one per run. */
  private async announce(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const runIds = [...this.due];
    this.due.clear();
    if (runIds.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const runId of runIds) pipeline.publish(runChangesChannel, runId);
    const failed = await pipeline.exec().then(
      (results) => results?.find(([error]) => error)?.[0] ?? undefined,
      (error: unknown) => error,
    );
    if (failed)
      this.logger.warn(
        { err: failed, runs: runIds.length },
        "could not announce run changes; their watchers read them again soon",
      );
  }

  private notify(runId: string): void {
    for (const listener of this.listeners.get(runId) ?? []) listener();
  }

  private notifyAll(): void {
    for (const set of this.listeners.values()) for (const listener of set) listener();
  }
}
