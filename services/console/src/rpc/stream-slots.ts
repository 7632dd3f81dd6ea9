import { Code, ConnectError } from "@connectrpc/connect";

/** The bounds on live run streams (WatchRun) one console replica serves at once. */
export interface StreamBounds {
  /** Streams of one session (one signed-in browser). */
  perSession: number;
  /** Streams of one project, all sessions together. */
  perProject: number;
}

/**
 * Counts the live run streams this replica serves, per session and per project, so that one
 * person (a Viewer too) cannot hold every WatchRun stream of the runs service and leave other
 * tenants' run pages and long-polls without one. Counted in this replica's memory: the console has
 * no Redis, and a stream lives only as long as its window (WATCH_WINDOW_SECONDS), so the bounds
 * hold per replica (docs/security.md, "Resource limits").
 */
export class StreamSlots {
  private readonly sessions = new Map<string, number>();
  private readonly projects = new Map<string, number>();

  constructor(readonly bounds: StreamBounds) {}

  /**
   * Takes a place for one stream of the session in the project; returns its release (call it once,
   * when the stream ends). RESOURCE_EXHAUSTED when either bound is reached: the run page then reads
   * the run every few seconds instead (services/console/web/src/watch.ts).
   */
  acquire(sessionId: string, projectId: string): () => void {
    const ofSession = this.sessions.get(sessionId) ?? 0;
    const ofProject = this.projects.get(projectId) ?? 0;
    if (ofSession >= this.bounds.perSession)
      throw new ConnectError(
        `this session follows ${this.bounds.perSession} runs live already, the most it may; the page reads the run every few seconds instead`,
        Code.ResourceExhausted,
      );
    if (ofProject >= this.bounds.perProject)
      throw new ConnectError(
        `this project's runs are followed live by ${this.bounds.perProject} pages already, the most it may; the page reads the run every few seconds instead`,
        Code.ResourceExhausted,
      );
    this.sessions.set(sessionId, ofSession + 1);
    this.projects.set(projectId, ofProject + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      decrement(this.sessions, sessionId);
      decrement(this.projects, projectId);
    };
  }
}

/** One less in `counts` for `id`, forgetting it at zero so the maps hold only open streams. */
function decrement(counts: Map<string, number>, id: string): void {
  const left = (counts.get(id) ?? 0) - 1;
  if (left > 0) counts.set(id, left);
  else counts.delete(id);
}
