import type { Redis } from "ioredis";
import type { Logger } from "pino";

/** The Redis pub/sub channel on which replicas announce a run they changed; the payload is its id. */
export const runChangesChannel = "testrun:runs:changed";

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

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
  ) {}

  /** Announces a committed change of a run. Never fails the caller: watchers read the run again soon. */
  async changed(runId: string): Promise<void> {
    try {
      await this.redis.publish(runChangesChannel, runId);
    } catch (err) {
      this.logger.warn({ err, runId }, "could not announce a run change; its watchers read it again soon");
    }
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

  /** Closes the subscriber connection (shutdown); nothing is heard afterwards. */
  close(): void {
    this.closed = true;
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

  private notify(runId: string): void {
    for (const listener of this.listeners.get(runId) ?? []) listener();
  }

  private notifyAll(): void {
    for (const set of this.listeners.values()) for (const listener of set) listener();
  }
}
