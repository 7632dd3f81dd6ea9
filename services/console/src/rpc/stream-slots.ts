import { Code, ConnectError } from "@connectrpc/connect";
import { refusals } from "../metrics.js";

/** The bounds on live run streams (WatchRun) one console replica serves at once. */
export interface StreamBounds {
  /** Streams of one session (one signed-in browser). */
  perSession: number;
  /** Streams of one project, all sessions together. */
  perProject: number;
}

/** A place taken for one live stream: release it once, when the stream ends. */
export interface StreamSlot {
  release(): void;
  /** Aborted when the stream's session ends on this replica (closeSessions): end the stream. */
  signal: AbortSignal;
}

/**
 * Counts the live run streams this replica serves, per session and per project, so that one
 * person (a Viewer too) cannot hold every WatchRun stream of the runs service and leave other
 * tenants' run pages and long-polls without one. Counted in this replica's memory: the console has
 * no Redis, and a stream lives only as long as its window (WATCH_WINDOW_SECONDS), so the bounds
 * hold per replica (docs/security.md, "Resource limits").
 *
 * Streams are kept by session (the digest of its id, as the sessions table names it), so a
 * session ended here (its member removed in the console, Sign out everywhere) closes its streams
 * at once. Streams on other replicas, and of sessions ended otherwise (removal by testrunctl),
 * end at their window: the next call is refused.
 */
export class StreamSlots {
  private readonly sessions = new Map<string, Set<AbortController>>();
  private readonly projects = new Map<string, number>();

  /** Live streams open on this replica. */
  private openCount = 0;

  constructor(readonly bounds: StreamBounds) {}

  /** Live streams open on this replica now (the metrics' gauge). */
  get open(): number {
    return this.openCount;
  }

  /**
   * Takes a place for one stream of the session (its digest) in the project. RESOURCE_EXHAUSTED
   * when either bound is reached: the run page then reads the run every few seconds instead
   * (services/console/web/src/watch.ts).
   */
  acquire(sessionDigest: string, projectId: string): StreamSlot {
    const ofSession = this.sessions.get(sessionDigest) ?? new Set<AbortController>();
    const ofProject = this.projects.get(projectId) ?? 0;
    if (ofSession.size >= this.bounds.perSession || ofProject >= this.bounds.perProject)
      refusals.inc({ reason: "waits_exhausted" });
    if (ofSession.size >= this.bounds.perSession)
      throw new ConnectError(
        `this session follows ${this.bounds.perSession} runs live already, the most it may; the page reads the run every few seconds instead`,
        Code.ResourceExhausted,
      );
    if (ofProject >= this.bounds.perProject)
      throw new ConnectError(
        `this project's runs are followed live by ${this.bounds.perProject} pages already, the most it may; the page reads the run every few seconds instead`,
        Code.ResourceExhausted,
      );
    const stream = new AbortController();
    this.sessions.set(sessionDigest, ofSession.add(stream));
    this.projects.set(projectId, ofProject + 1);
    this.openCount++;
    let released = false;
    return {
      signal: stream.signal,
      release: () => {
        if (released) return;
        released = true;
        this.openCount--;
        ofSession.delete(stream);
        if (ofSession.size === 0 && this.sessions.get(sessionDigest) === ofSession)
          this.sessions.delete(sessionDigest);
        decrement(this.projects, projectId);
      },
    };
  }

  /** Ends the live streams of these sessions (digests) on this replica: the sessions ended. */
  closeSessions(sessionDigests: readonly string[]): void {
    for (const digest of sessionDigests) for (const stream of this.sessions.get(digest) ?? []) stream.abort();
  }
}

/** One less in `counts` for `id`, forgetting it at zero so the maps hold only open streams. */
function decrement(counts: Map<string, number>, id: string): void {
  const left = (counts.get(id) ?? 0) - 1;
  if (left > 0) counts.set(id, left);
  else counts.delete(id);
}
