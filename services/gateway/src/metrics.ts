import { counter, gauge } from "@testrun/kit";
import type { HttpError, RefusalReason } from "./http-error.js";

// The gateway's domain metrics (docs/operations.md, "Metrics"): refusals by reason (never by key or
// project) and the long-polls open.

export const refusals = counter<"reason">("testrun_refusals_total", "Refused requests, by reason", [
  "reason",
]);
export const longPollWaitsOpen = gauge("testrun_long_poll_waits_open", "wait= long-polls open");

const byStatus: Partial<Record<number, RefusalReason>> = {
  401: "unauthenticated",
  402: "payment_required",
  403: "forbidden",
  413: "body_too_large",
  429: "rate_limited",
};

/** Counts an answer the gateway refused with; other errors (400, 404, 409, 5xx) are no refusals. */
export function countRefusal(error: HttpError): void {
  const reason = error.status === 429 ? (error.refusal ?? "rate_limited") : byStatus[error.status];
  if (reason) refusals.inc({ reason });
}
