import type { EgressGuard } from "@testrun/kit/egress";

export type Reachability =
  | { reachable: true }
  /** `reason` for the run's summary; `cause` (an error code, no address) for the operator's log only. */
  | { reachable: false; reason: string; cause: string };

/**
 * Why a run is skipped when its base URL does not answer: one reason for an unknown host, a refused
 * or timed-out connection, no answer in time, a TLS failure and an address the egress policy
 * refuses, so the check cannot be used to tell what lies behind an address (a port scanner).
 */
export const noAnswer = "no HTTP answer from the base URL";

/**
 * Whether the environment's base URL answers at all, through the egress guard: any HTTP response
 * counts, whatever its status; anything else does not.
 */
export async function checkReachable(
  baseUrl: string,
  egress: EgressGuard,
  timeoutMs = 5_000,
): Promise<Reachability> {
  try {
    const response = await egress.fetch(baseUrl, {
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel().catch(() => {});
    return { reachable: true };
  } catch (error) {
    return { reachable: false, reason: noAnswer, cause: causeOf(error) };
  }
}

/** EGRESS_REFUSED, ECONNREFUSED, ENOTFOUND, TimeoutError…: what went wrong, without the host. */
function causeOf(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const first = cause instanceof AggregateError ? cause.errors[0] : cause;
  const code = (first as { code?: unknown } | undefined)?.code;
  if (typeof code === "string") return code;
  return error instanceof Error ? error.name : "unknown";
}
