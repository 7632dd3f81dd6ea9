// What may be repeated, and when (docs/pipelines.md, "How it waits"): reads through network
// errors and 5xx with exponential backoff; anything answered 429 after its Retry-After; never a 4xx.
import { ApiError, NetworkError } from "./client.js";

/** The wait ran out while a request was still being retried; `cause` is the last failure. */
export class DeadlineReached extends Error {
  constructor(readonly last: unknown) {
    super("the deadline passed while retrying", { cause: last });
    this.name = "DeadlineReached";
  }
}

export interface RetryPolicy {
  /** Retry no later than this (ms since the epoch): past it, DeadlineReached. */
  deadline?: number;
  /** Give up (rethrow) once failures other than 429 have lasted this long in a row. */
  outageMs: number;
  signal?: AbortSignal;
  /** Told before every pause: what failed, and how long the pause is. */
  onRetry?: (reason: string, delayMs: number) => void;
  /** First backoff; doubled per failure up to maxDelayMs. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Whether a failure of a read may be retried, and after how long at least. */
export function retryable(error: unknown): { retry: boolean; afterMs?: number } {
  if (error instanceof NetworkError) return { retry: true };
  if (error instanceof ApiError) {
    if (error.status === 429) return { retry: true, afterMs: (error.retryAfterSeconds ?? 1) * 1000 };
    // 501 (an endpoint this gateway does not serve) never changes by retrying.
    if (error.status >= 500 && error.status !== 501) return { retry: true };
  }
  return { retry: false };
}

export function describeFailure(error: unknown): string {
  if (error instanceof ApiError)
    return `HTTP ${error.status}${error.code ? ` ${error.code}` : ""}: ${error.message}`;
  if (error instanceof NetworkError) return `no answer: ${error.message}`;
  return String(error);
}

/** Calls `call` until it succeeds or fails in a way that is not retryable (see `retryable`). */
export async function withRetries<T>(
  call: () => Promise<T>,
  policy: RetryPolicy,
  isRetryable: (error: unknown) => { retry: boolean; afterMs?: number } = retryable,
): Promise<T> {
  const sleep = policy.sleep ?? abortableSleep;
  const initial = policy.initialDelayMs ?? 1000;
  const max = policy.maxDelayMs ?? 30_000;
  let failures = 0;
  let outageStart: number | undefined;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (policy.signal?.aborted) throw error;
      const verdict = isRetryable(error);
      if (!verdict.retry) throw error;
      const now = Date.now();
      let delay: number;
      if (verdict.afterMs !== undefined) {
        // A 429 is the gateway pacing us, not an outage: wait exactly as long as it asks.
        delay = verdict.afterMs + Math.floor(Math.random() * 250);
      } else {
        outageStart ??= now;
        if (now - outageStart >= policy.outageMs) throw error;
        delay = Math.min(max, initial * 2 ** failures) * (0.8 + Math.random() * 0.4);
        failures += 1;
      }
      if (policy.deadline !== undefined && now + delay >= policy.deadline) {
        await sleep(Math.max(0, policy.deadline - now), policy.signal);
        throw new DeadlineReached(error);
      }
      policy.onRetry?.(describeFailure(error), delay);
      await sleep(delay, policy.signal);
    }
  }
}

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
