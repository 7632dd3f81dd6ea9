import { Code, ConnectError } from "@connectrpc/connect";
import {
  AmbiguousNameSchema,
  FieldViolationsSchema,
  InsufficientCreditsSchema,
} from "@testrun/gen/testrun/common/v1/errors_pb";

/**
 * A mistake in what the operator typed or gave as input (options, arguments, an input file), found
 * before any service was called. Exit code 2.
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** A failure the CLI found itself after asking a service (e.g. no test case has that name). Exit code 1. */
export class CommandError extends Error {
  override readonly name = "CommandError";
}

/**
 * A failed call to a service, with which service and method it was, so the one-line message can say
 * where to look. Exit code 1.
 */
export class ServiceCallError extends Error {
  override readonly name = "ServiceCallError";

  constructor(
    readonly service: string,
    readonly url: string,
    readonly method: string,
    readonly error: ConnectError,
    /** Rewrites a field path of the request into the operator's terms (e.g. a file's field names). */
    readonly fieldPath: (field: string) => string = (field) => field,
    /** Said after the error, e.g. what was done before the call failed. */
    readonly note = "",
  ) {
    super(error.rawMessage);
  }

  get code(): Code {
    return this.error.code;
  }
}

const codeText: Partial<Record<Code, string>> = {
  [Code.InvalidArgument]: "invalid argument",
  [Code.NotFound]: "not found",
  [Code.AlreadyExists]: "already exists",
  [Code.PermissionDenied]: "permission denied",
  [Code.FailedPrecondition]: "failed precondition",
  [Code.ResourceExhausted]: "limit reached",
  [Code.Aborted]: "aborted",
  [Code.Internal]: "internal error in the service (see its logs)",
  [Code.Unknown]: "unknown error",
};

/** One line describing a failed service call: what went wrong, in the operator's terms. */
export function describeServiceError(failure: ServiceCallError): string {
  const { service, url, method, error } = failure;
  const where = `${service} ${method}`;
  switch (error.code) {
    case Code.Unavailable:
      return `cannot reach the ${service} service at ${url} (is it running? set ${service.toUpperCase()}_URL): ${error.rawMessage}`;
    case Code.DeadlineExceeded:
      return `the ${service} service at ${url} did not answer in time (${method})`;
    case Code.Unauthenticated:
      return `the ${service} service refused the service token: check SERVICE_TOKEN (${method})`;
    case Code.Unimplemented:
      return `the ${service} service at ${url} does not implement ${method} (is it up to date?)`;
    case Code.Canceled:
      return `${where} was cancelled`;
  }
  let text = `${codeText[error.code] ?? Code[error.code]}: ${error.rawMessage}`;
  const violations = error.findDetails(FieldViolationsSchema).flatMap((detail) => detail.violations);
  if (violations.length > 0) {
    text = `${codeText[error.code]}: ${violations
      .map((violation) => `${failure.fieldPath(violation.field)}: ${violation.description}`)
      .join("; ")}`;
  }
  const [ambiguous] = error.findDetails(AmbiguousNameSchema);
  if (ambiguous) text += ` (use one of these ids: ${ambiguous.candidateIds.join(", ")})`;
  const [credits] = error.findDetails(InsufficientCreditsSchema);
  if (credits) text += ` (required ${credits.required}, available ${credits.available})`;
  return `${text} (${where})${failure.note ? `; ${failure.note}` : ""}`;
}

/** Wraps whatever a call threw as a ServiceCallError naming the service and method. */
export function serviceCallError(service: string, url: string, method: string, error: unknown) {
  return new ServiceCallError(service, url, method, ConnectError.from(error));
}
