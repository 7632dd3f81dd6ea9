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
    const failure = ConnectError.from(error);
    if (meantForCaller.has(failure.code)) throw failure;
    // The cause stays on the error for the call log; the browser sees only this message.
    throw new ConnectError(
      "a Testrun service is unavailable; try again in a moment",
      Code.Unavailable,
      undefined,
      undefined,
      failure,
    );
  }
}
