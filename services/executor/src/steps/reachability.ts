import { describeFetchError } from "./http.js";

export type Reachability = { reachable: true } | { reachable: false; reason: string };

/**
 * Whether the environment's base URL answers at all: any HTTP response counts, whatever its
 * status; a refused connection, an unknown host or no answer within the timeout does not.
 */
export async function checkReachable(baseUrl: string, timeoutMs = 5_000): Promise<Reachability> {
  try {
    const response = await fetch(baseUrl, { redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel().catch(() => {});
    return { reachable: true };
  } catch (error) {
    if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError"))
      return { reachable: false, reason: `no answer within ${timeoutMs} ms` };
    return { reachable: false, reason: describeFetchError(error) };
  }
}
