import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { InsufficientCreditsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import { counter, gauge } from "@testrun/kit";

// The console's domain metrics (docs/operations.md, "Metrics"): refusals by reason (never by member
// or project) and the live run streams open. The same names as the gateway's, told apart by
// `component`.

export const refusals = counter<"reason">("testrun_refusals_total", "Refused requests, by reason", [
  "reason",
]);

/** The live WatchRun streams this replica serves (rpc/stream-slots.ts). */
export function registerWatchStreamsGauge(open: () => number): void {
  gauge("testrun_watch_streams_open", "WatchRun streams open", [], function () {
    this.set(open());
  });
}

/** Counts an API call refused for who is calling or what they may spend (not a bad request). */
export function countRefusal(error: unknown): void {
  if (!(error instanceof ConnectError)) return;
  if (error.code === Code.Unauthenticated) refusals.inc({ reason: "unauthenticated" });
  else if (error.code === Code.PermissionDenied) refusals.inc({ reason: "forbidden" });
  else if (error.code === Code.FailedPrecondition && error.findDetails(InsufficientCreditsSchema).length > 0)
    refusals.inc({ reason: "payment_required" });
}

/** Counts the refusals of the console API's calls (stream slots count their own: waits_exhausted). */
export const refusalsInterceptor: Interceptor = (next) => async (req) => {
  try {
    return await next(req);
  } catch (error) {
    countRefusal(error);
    throw error;
  }
};
