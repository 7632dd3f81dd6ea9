import { Code, ConnectError } from "@connectrpc/connect";

/** Codes whose message the owning service wrote for the caller (role rules, validation, limits). */
const meantForCaller = new Set([
  Code.InvalidArgument,
  Code.NotFound,
  Code.AlreadyExists,
  Code.PermissionDenied,
  Code.FailedPrecondition,
  Code.ResourceExhausted,
  Code.Aborted,
  Code.OutOfRange,
]);

/**
 * Runs a call to another service on the browser's behalf. Refusals reach the browser as the
 * owning service worded them (with their details); transport failures and internal errors become
 * one UNAVAILABLE with no internal address or driver text in it.
 */
export async function relay<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    throw relayed(error);
  }
}

/** What the browser may see of a failed call to another service (see relay). */
export function relayed(error: unknown): ConnectError {
  const failure = ConnectError.from(error);
  if (meantForCaller.has(failure.code)) return failure;
  // The cause stays on the error for the call log; the browser sees only this message.
  return new ConnectError(
    "a Testrun service is unavailable; try again in a moment",
    Code.Unavailable,
    undefined,
    undefined,
    failure,
  );
}

/**
 * A name to show beside an id: what the lookup found, or "" when it failed for any reason (a
 * deleted item, a service away): the page then shows the id, and the call it decorates succeeds.
 */
export async function nameOrNothing(lookup: Promise<string | undefined>): Promise<string> {
  try {
    return (await lookup) ?? "";
  } catch {
    return "";
  }
}
