import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  AmbiguousNameSchema,
  type FieldViolation,
  FieldViolationSchema,
  FieldViolationsSchema,
} from "@testrun/gen/testrun/common/v1/errors_pb";

// The errors every handler answers with. Messages name ids and fields, never a value that could be
// secret (a variable's value never reaches any of them).

export const invalid = (message: string) => new ConnectError(message, Code.InvalidArgument);
export const notFound = (message: string) => new ConnectError(message, Code.NotFound);
export const denied = (message: string) => new ConnectError(message, Code.PermissionDenied);
export const alreadyExists = (message: string) => new ConnectError(message, Code.AlreadyExists);
export const failedPrecondition = (message: string) => new ConnectError(message, Code.FailedPrecondition);

/** ABORTED with an AmbiguousName detail: the caller must pass one of the candidates' ids. */
export function ambiguous(field: string, name: string, candidateIds: string[]): ConnectError {
  return new ConnectError(
    `${field} "${name}" matches ${candidateIds.length} items; pass one of their ids instead`,
    Code.Aborted,
    undefined,
    [{ desc: AmbiguousNameSchema, value: { field, name, candidateIds } }],
  );
}

/**
 * The most violations a refusal lists. Requests hold lists and maps of thousands of entries; a
 * violation per entry would make the error larger than the request (and take the catalog's memory),
 * so past this many they are only counted (docs/security.md, "Resource limits").
 */
export const maxListedViolations = 100;

/**
 * Collects what is wrong with a structured request, so the caller learns every bad field at once:
 * INVALID_ARGUMENT whose message repeats the first violation, with a FieldViolations detail of the
 * first `maxListedViolations`.
 */
export class Violations {
  readonly list: FieldViolation[] = [];
  /** Every violation added, listed or not. */
  count = 0;

  add(field: string, description: string): void {
    this.count++;
    if (this.list.length < maxListedViolations)
      this.list.push(create(FieldViolationSchema, { field, description }));
  }

  get empty(): boolean {
    return this.count === 0;
  }

  /** Whether some violations were counted and not listed. */
  get truncated(): boolean {
    return this.count > this.list.length;
  }

  /** Throws when anything was added. */
  check(): void {
    const first = this.list[0];
    if (!first) return;
    const unlisted = this.truncated
      ? `; the first ${this.list.length} are in the FieldViolations detail`
      : "";
    const more = this.count > 1 ? ` (and ${this.count - 1} more${unlisted})` : "";
    throw new ConnectError(`${first.field}: ${first.description}${more}`, Code.InvalidArgument, undefined, [
      { desc: FieldViolationsSchema, value: { violations: this.list } },
    ]);
  }
}
