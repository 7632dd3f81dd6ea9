// Follows a run live with ConsoleService.WatchRun (server streaming over Connect, not polling).
// The console ends a stream after a window even while the run goes on: the page then calls again
// at once. After the first message (the whole run) it receives only what changed, and applies it
// (run-changes.ts); when a change does not apply to the run it shows, it calls again for the whole
// run. A stream that breaks is called again with backoff (1, 2, 4… up to 30 s), and the page
// says it is reconnecting. It stops when the run is finished, or on an answer such as NOT_FOUND.
// A stream refused for capacity (RESOURCE_EXHAUSTED: the session, the project or the runs service
// follows as many runs live as it may, docs/security.md "Resource limits") is not retried at once:
// the run is read every few seconds instead (GetRun), the page says so, and the stream is tried
// again after a minute.
import { type Client, Code, type ConnectError, createClient } from "@connectrpc/connect";
import { useTransport } from "@connectrpc/connect-query";
import { ConsoleService, type RunDetails } from "@testrun/gen/testrun/console/v1/console_pb";
import type { Run } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { useCallback, useEffect, useState } from "react";
import { errorOf, goToSignIn } from "../../api";
import { applyWatchMessage } from "./run-changes";

export interface RunWatch {
  /** The run as last received; undefined until the first message. */
  details?: RunDetails;
  /** An answer that calling again would not change (NOT_FOUND, PERMISSION_DENIED): the watch stopped. */
  error?: ConnectError;
  /** The stream broke while the run is unfinished; it is being called again. */
  reconnecting: boolean;
  /** Live streams are at capacity: the run is read every few seconds instead (see pollWhileBusy). */
  polling?: boolean;
}

/** Answers that mean "stop": everything else (network, console restarting, a cut stream) is retried. */
const definitive = new Set([
  Code.NotFound,
  Code.PermissionDenied,
  Code.Unauthenticated,
  Code.InvalidArgument,
]);
const longestPauseMs = 30_000;
/** How often the run is read while live streams are at capacity… */
const pollEveryMs = 5_000;
/** …and for how long before the stream is tried again. */
const pollForMs = 60_000;

/** Waits `ms`, or less when the signal aborts. */
const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * Reads the run every `pollEveryMs` for `pollForMs` (or until it is finished, or the page is
 * left), showing each read; resolves with whether the run is finished. A failed read is tried at
 * the next tick: the stream, called again afterwards, deals with lasting answers.
 */
async function pollWhileBusy(
  client: Client<typeof ConsoleService>,
  request: { projectId: string; runId: string },
  signal: AbortSignal,
  show: (details: RunDetails) => void,
): Promise<boolean> {
  const until = Date.now() + pollForMs;
  while (!signal.aborted && Date.now() < until) {
    try {
      const { run } = await client.getRun(request, { signal });
      if (run) show(run);
      if (run?.run?.finished) return true;
    } catch {
      // Tried again at the next tick.
    }
    await pause(pollEveryMs, signal);
  }
  return false;
}

/** Follows the run while `enabled` (default: always, until it finishes). */
export function useRunWatch(projectId: string, runId: string, enabled = true) {
  const transport = useTransport();
  const [watch, setWatch] = useState<RunWatch>({ reconnecting: false });

  useEffect(() => {
    if (!enabled) return;
    const client = createClient(ConsoleService, transport);
    const abort = new AbortController();
    setWatch({ reconnecting: false });
    let finished = false;
    let failures = 0;
    /** The run as last shown, which the next change applies to. */
    let shown: RunDetails | undefined;
    void (async () => {
      while (!abort.signal.aborted && !finished) {
        let received = 0;
        try {
          const stream = client.watchRun({ projectId, runId, changes: true }, { signal: abort.signal });
          for await (const message of stream) {
            const next = applyWatchMessage(shown, message);
            // A change missed: call again at once, the new stream's first message is the whole run.
            if (next === "resync") break;
            if (!next || next === shown) continue;
            shown = next;
            received++;
            failures = 0;
            finished = next.run?.finished ?? false;
            setWatch({ details: next, reconnecting: false });
          }
          // The window closed with news in it: call again at once. A stream that ended with nothing
          // counts as a failure, so a misbehaving server is not called in a tight loop.
          if (received > 0 || finished) continue;
          throw new Error("the run's stream ended without a message");
        } catch (error) {
          if (abort.signal.aborted) return;
          const failure = errorOf(error);
          if (failure.code === Code.Unauthenticated) {
            goToSignIn(failure);
            return;
          }
          if (failure.code === Code.ResourceExhausted) {
            failures = 0;
            finished = await pollWhileBusy(client, { projectId, runId }, abort.signal, (details) =>
              setWatch({ details, reconnecting: false, polling: true }),
            );
            continue;
          }
          if (definitive.has(failure.code)) {
            setWatch((current) => ({ ...current, error: failure, reconnecting: false }));
            return;
          }
          failures++;
          setWatch((current) => ({ ...current, reconnecting: true }));
          const backoff = Math.min(longestPauseMs, 1000 * 2 ** (failures - 1));
          await pause(backoff * (0.75 + Math.random() / 2), abort.signal);
        }
      }
    })();
    return () => abort.abort();
  }, [projectId, runId, transport, enabled]);

  /** Shows a run another call returned (CancelRun) before the stream brings it. */
  const show = useCallback((run: Run | undefined) => {
    if (!run) return;
    setWatch((current) =>
      current.details ? { ...current, details: { ...current.details, run } as RunDetails } : current,
    );
  }, []);

  return { ...watch, show };
}
