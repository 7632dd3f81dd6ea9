/** The error body of every failed request (decisions.md, "Errors"). */
export interface ErrorBody {
  error: string;
  code: ErrorCode;
  [extra: string]: unknown;
}

/** The machine-readable codes of decisions.md, plus `not_implemented` for paths not served yet. */
export type ErrorCode =
  | "invalid_request"
  | "unauthorized"
  | "key_expired"
  | "forbidden"
  | "not_found"
  | "ambiguous_name"
  | "insufficient_credits"
  | "rate_limited"
  | "payload_too_large"
  | "method_not_allowed"
  | "not_implemented"
  | "internal";

/** An error the gateway answers with deliberately: its status, code, message and extras reach the client. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The answer to anything unexpected: says nothing about what went wrong (the log line does). */
export const internalError = (): HttpError => new HttpError(500, "internal", "internal error");
