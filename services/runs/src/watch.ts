import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type Run,
  WatchMode,
  type WatchRunResponse,
  WatchRunResponseSchema,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { Logger } from "pino";
import { runNotFound } from "./errors.js";
import type { ExecutorKinds } from "./executor-kinds.js";
import type { Links } from "./links.js";
import { renderRun } from "./render.js";
import type { RunRow, RunWithTests, TestRow } from "./rows.js";
import type { RunEvents } from "./run-events.js";

export interface WatchOptions {
  /** How often a watched run is read again when no notice came. */
  refreshMs: number;
  /**
   * The shortest time between two reads of a run's changes: the changes that come meanwhile share
   * the next read (and message), so a run that changes faster costs no more reads than this allows.
   */
  readSpacingMs: number;
  /** Streams this replica serves at once. */
  maxStreams: number;
}

/** The reads a watch makes (store/reads.ts RunReads): the whole run once, then only what changed. */
export interface WatchReads {
  getRun(projectId: string, runId: string): Promise<RunWithTests | undefined>;
  getRunChanges(runId: string, version: number): Promise<RunWithTests | undefined>;
}

const versionOf = (row: { version: string | number }) => Number(row.version);
const isFinished = (run: RunRow) => run.finished_at !== null;

/** What one read after a change brought: the run's row, and its tests changed after `since`. */
interface Change {
  since: number;
  run: RunRow;
  tests: TestRow[];
  /** The change rendered, made by the first stream that sends it as is and shared by the others. */
  rendered?: Run;
}

/**
 * One run as this replica's streams of it see it: its whole state, kept up to date from the
 * changes it reads, one read per change (or per refresh) whatever the number of streams, shared
 * with all of them. Made by the first stream of the run, dropped with its last.
 */
class RunFeed {
  /** The run with all its tests, as of `run.version`; undefined until the first read succeeded. */
  private state: { run: RunRow; tests: TestRow[]; positions: Map<string, number> } | undefined;
  private loading: Promise<void> | undefined;
  private reading = false;
  private readAgain = false;
  private lastReadAt = Number.NEGATIVE_INFINITY;
  /** The next read, when a notice came sooner than `readSpacingMs` after the last one. */
  private scheduled: NodeJS.Timeout | undefined;
  /** The whole run rendered, for the streams that send it; made once per version. */
  private rendered: { version: number; run: Run } | undefined;
  readonly listeners = new Set<(change: Change) => void>();
  private readonly stopListening: () => void;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly runId: string,
    private readonly reads: WatchReads,
    private readonly links: Links,
    events: RunEvents,
    private readonly options: WatchOptions,
    private readonly logger: Logger,
    private readonly kinds?: ExecutorKinds,
  ) {
    this.stopListening = events.listen(runId, () => void this.refresh());
    this.timer = setInterval(() => void this.refresh(), options.refreshMs);
  }

  /**
   * The run as a stream of `projectId` starts from, read the first time (one read shared by the
   * streams that wait for it); undefined when there is no such run in that project.
   */
  async join(projectId: string): Promise<{ version: number; run: Run } | undefined> {
    if (!this.state) {
      const mine = this.loading === undefined;
      this.loading ??= this.load(projectId).finally(() => {
        this.loading = undefined;
      });
      await this.loading;
      // That read was another stream's, of another project maybe: it kept nothing, so read for this one.
      if (!this.state && !mine) await this.load(projectId);
    }
    if (!this.state || this.state.run.project_id !== projectId) return undefined;
    return this.whole();
  }

  /** The whole run as it is now, rendered once per version. */
  whole(): { version: number; run: Run } {
    const state = this.state as NonNullable<RunFeed["state"]>;
    const version = versionOf(state.run);
    if (this.rendered?.version !== version)
      this.rendered = { version, run: renderRun(state.run, state.tests, this.links, this.kinds) };
    return this.rendered;
  }

  close(): void {
    this.stopListening();
    clearInterval(this.timer);
    clearTimeout(this.scheduled);
  }

  private async load(projectId: string): Promise<void> {
    const found = await this.reads.getRun(projectId, this.runId);
    if (!found || this.state) return;
    this.state = {
      run: found.run,
      tests: found.tests,
      positions: new Map(found.tests.map((test, index) => [test.id, index])),
    };
  }

  /**
   * Reads what changed after the version held, at most once every `readSpacingMs`: notices during a
   * read, or sooner after it, cause one more read when that time is up, not one each.
   */
  private async refresh(): Promise<void> {
    if (!this.state || this.scheduled) return;
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    const wait = this.lastReadAt + this.options.readSpacingMs - performance.now();
    if (wait > 0) {
      this.scheduled = setTimeout(() => {
        this.scheduled = undefined;
        void this.refresh();
      }, wait);
      return;
    }
    this.reading = true;
    this.readAgain = false;
    this.lastReadAt = performance.now();
    const since = versionOf(this.state.run);
    try {
      const found = await this.reads.getRunChanges(this.runId, since);
      if (found && versionOf(found.run) > since) {
        this.apply(found);
        const change: Change = { since, run: found.run, tests: found.tests };
        for (const listener of this.listeners) listener(change);
      }
    } catch (err) {
      this.logger.warn(
        { err, runId: this.runId },
        "could not read a watched run; trying again at the next refresh",
      );
    } finally {
      this.reading = false;
    }
    if (this.readAgain) void this.refresh();
  }

  private apply(found: RunWithTests): void {
    const state = this.state as NonNullable<RunFeed["state"]>;
    state.run = found.run;
    for (const test of found.tests) {
      const position = state.positions.get(test.id);
      if (position === undefined) {
        state.positions.set(test.id, state.tests.length);
        state.tests.push(test);
      } else state.tests[position] = test;
    }
  }
}

/** Changes that came while a stream was sending, as one: the latest run row, each test's latest state. */
function merge(changes: Change[]): Change {
  const tests = new Map<string, TestRow>();
  for (const change of changes) for (const test of change.tests) tests.set(test.id, test);
  const first = changes[0] as Change;
  const last = changes.at(-1) as Change;
  return { since: first.since, run: last.run, tests: [...tests.values()] };
}

/**
 * The WatchRun streams of this replica. The streams of one run share its feed (RunFeed): it reads
 * the whole run once, then, when a change notice names the run or `refreshMs` passed without one,
 * only what changed after the version it holds (store/reads.ts getRunChanges), once for all of
 * them; notices arriving while a read is in flight, or within `readSpacingMs` of the last read,
 * cause one more read when that time is up, not one each.
 * A stream sends the whole run first, then what its mode asks for (runs.proto, WatchMode), never
 * twice for one version. It ends after the finished run, when its caller goes away, or at shutdown
 * (`close`), so that a rollout does not wait on open streams.
 */
export class RunWatches {
  /** What interrupts each open stream's wait: its caller left, or the replica shuts down. */
  private readonly streams = new Set<() => void>();
  private readonly feeds = new Map<string, RunFeed>();
  private closed = false;

  /** WatchRun streams open now (a gauge of the metrics). */
  get openStreams(): number {
    return this.streams.size;
  }

  constructor(
    private readonly events: RunEvents,
    private readonly reads: WatchReads,
    private readonly links: Links,
    private readonly options: WatchOptions,
    private readonly logger: Logger,
    /** What a QUEUED test waits for (TestResult.waiting_for), as of each rendering. */
    private readonly kinds?: ExecutorKinds,
  ) {}

  /**
   * Yields the run's messages until it is finished or `signal` aborts. No such run in the project
   * ends the stream before any message with NOT_FOUND, as does a failure of the first read.
   */
  async *watch(
    projectId: string,
    runId: string,
    mode: WatchMode,
    signal: AbortSignal,
  ): AsyncGenerator<WatchRunResponse> {
    if (this.closed) throw new ConnectError("the service is shutting down", Code.Unavailable);
    if (this.streams.size >= this.options.maxStreams)
      throw new ConnectError(
        "this replica watches as many runs as it may; call again later",
        Code.ResourceExhausted,
      );

    let feed = this.feeds.get(runId);
    if (!feed) {
      feed = new RunFeed(runId, this.reads, this.links, this.events, this.options, this.logger, this.kinds);
      this.feeds.set(runId, feed);
    }
    const pending: Change[] = [];
    let wake: (() => void) | undefined;
    const listener = (change: Change) => {
      pending.push(change);
      wake?.();
    };
    const interrupt = () => wake?.();
    // Listening before the first read: no change between that read and the first wait is missed.
    feed.listeners.add(listener);
    signal.addEventListener("abort", interrupt);
    this.streams.add(interrupt);
    try {
      const first = await feed.join(projectId);
      if (!first) throw runNotFound();
      let version = first.version;
      yield create(WatchRunResponseSchema, { run: first.run });
      if (first.run.finished) return;
      for (;;) {
        if (pending.length === 0 && !signal.aborted && !this.closed)
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        wake = undefined;
        if (signal.aborted || this.closed) return;
        const news = pending.splice(0).filter((change) => versionOf(change.run) > version);
        if (news.length === 0) continue;
        const change = news.length === 1 ? (news[0] as Change) : merge(news);
        const finished = isFinished(change.run);
        if (mode === WatchMode.CHANGES && change.since <= version) {
          // Only the tests changed after what this stream sent (a change may start before it); the
          // usual case, a change from the version sent, is rendered once for all streams.
          let rendered: Run;
          if (change.since === version) {
            change.rendered ??= renderRun(change.run, change.tests, this.links, this.kinds);
            rendered = change.rendered;
          } else {
            const tests = change.tests.filter((test) => versionOf(test) > version);
            rendered = renderRun(change.run, tests, this.links, this.kinds);
          }
          yield create(WatchRunResponseSchema, { change: rendered, sinceVersion: BigInt(version) });
          version = versionOf(change.run);
          if (finished) return;
        } else if (mode !== WatchMode.FINISH || finished) {
          // The run as the feed holds it now, which may be newer than the changes taken.
          const whole = feed.whole();
          yield create(WatchRunResponseSchema, { run: whole.run });
          version = whole.version;
          if (whole.run.finished) return;
        } else version = versionOf(change.run);
      }
    } finally {
      feed.listeners.delete(listener);
      if (feed.listeners.size === 0 && this.feeds.get(runId) === feed) {
        feed.close();
        this.feeds.delete(runId);
      }
      signal.removeEventListener("abort", interrupt);
      this.streams.delete(interrupt);
    }
  }

  /** Ends every open stream cleanly and refuses new ones (shutdown). */
  close(): void {
    this.closed = true;
    for (const interrupt of this.streams) interrupt();
    // A stream whose caller stopped reading sits at a `yield` and reaches its clean-up only if read
    // again: its feed's refresh timer stops here, so a shutdown is not held by it.
    for (const feed of this.feeds.values()) feed.close();
    this.feeds.clear();
  }
}
