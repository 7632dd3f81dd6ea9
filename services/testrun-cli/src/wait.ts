// Following a run until it finishes or the wait runs out (docs/pipelines.md, "How it waits").
//
// Each read is a long-poll, GET /v1/runs/:id?wait=S (S up to 30 s): the gateway answers as soon as
// the run is finished, or after S seconds. One rule covers gateways without long-poll too: no read
// starts less than 15 s (the contract's polling interval) after the previous one started. A real
// long-poll takes S >= 15 s, so it is followed at once; a gateway that ignores `wait` answers at
// once and the next read waits out the 15 s. A gateway that refuses `wait` (400) is read without it.
import {
  ApiError,
  abortableSleep,
  DeadlineReached,
  type Run,
  type TestrunClient,
  withRetries,
} from "@testrun/api-client";

export interface WaitOptions {
  /** When to stop waiting (ms since the epoch). */
  deadline: number;
  /** Aborts the wait (a signal to the process). */
  signal?: AbortSignal;
  /** Every answer read. */
  onUpdate?: (run: Run) => void;
  /** Before every pause of a retry. */
  onRetry?: (reason: string, delayMs: number) => void;
  /** Minimum time between the starts of two reads that are not long-polls. Default 15 s. */
  pollIntervalMs?: number;
  /** Longest long-poll asked for, in seconds (1 to 30). Default 30. */
  maxWaitSeconds?: number;
  /** How long reads may keep failing (network, 5xx) before the wait gives up. Default 5 min. */
  outageMs?: number;
}

export type WaitResult = { run: Run; timedOut: false } | { run: Run; timedOut: true };

/** Whether a client's gateway supports `?wait=`: unknown until a read says so. */
const longPolls = new WeakMap<TestrunClient, boolean>();

/** Resolves with the finished run, or the last one read when the deadline passed first. */
export async function waitForRun(
  client: TestrunClient,
  initial: Run,
  options: WaitOptions,
): Promise<WaitResult> {
  const pollInterval = options.pollIntervalMs ?? 15_000;
  const maxWait = Math.min(30, Math.max(1, options.maxWaitSeconds ?? 30));
  let run = initial;
  while (!run.finished) {
    const startedAt = Date.now();
    const remaining = options.deadline - startedAt;
    if (remaining <= 0) return { run, timedOut: true };
    const waitSeconds =
      longPolls.get(client) === false ? undefined : Math.min(maxWait, Math.ceil(remaining / 1000));
    try {
      run = await withRetries(() => client.getRun(run.id, waitSeconds, { signal: options.signal }), {
        deadline: options.deadline,
        outageMs: options.outageMs ?? 5 * 60_000,
        ...(options.signal && { signal: options.signal }),
        ...(options.onRetry && { onRetry: options.onRetry }),
      });
      if (waitSeconds !== undefined) longPolls.set(client, true);
    } catch (error) {
      if (error instanceof DeadlineReached) return { run, timedOut: true };
      if (waitSeconds !== undefined && refusesWait(error)) {
        longPolls.set(client, false);
        continue;
      }
      throw error;
    }
    options.onUpdate?.(run);
    if (run.finished) break;
    const next = Math.min(startedAt + pollInterval, options.deadline);
    if (next > Date.now()) await abortableSleep(next - Date.now(), options.signal);
  }
  return { run, timedOut: false };
}

/** A gateway from before long-poll refuses the unknown query parameter. */
const refusesWait = (error: unknown) =>
  error instanceof ApiError && error.status === 400 && /\bwait\b/.test(error.message);
