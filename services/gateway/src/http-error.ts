import type { ErrorCode } from "./api/schemas.js";

export type { ErrorCode };

/**
 * Why a request was refused, as the metrics count it (docs/operations.md; metrics.ts). Here, not
 * there: an error carries its reason, and the metrics read errors.
 */
export type RefusalReason =
  | "unauthenticated"
  | "payment_required"
  | "forbidden"
  | "rate_limited"
  | "waits_exhausted"
  | "auth_failures"
  | "body_too_large";

/** The error body of every failed request (docs/rest-api.md, "Errors"; api/schemas.ts). */
export interface ErrorBody {
  error: string;
  code: ErrorCode;
  [extra: string]: unknown;
}

/** An error the gateway answers with deliberately: its status, code, message and extras reach the client. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
    /** Which limit a 429 is (the metrics' refusal reason); the per-key rate limit when unset. */
    readonly refusal?: RefusalReason,
  ) {
    super(message);
  }
}

/** The answer to anything unexpected: says nothing about what went wrong (the log line does). */
export const internalError = (): HttpError => new HttpError(500, "internal", "internal error");
