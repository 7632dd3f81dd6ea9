import { Code, ConnectError } from "@connectrpc/connect";
import { FieldViolationsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";

/** INVALID_ARGUMENT naming every bad field (FieldViolations), its message the first one. */
export function violations(
  list: readonly { field: string; description: string }[],
): ConnectError | undefined {
  const first = list[0];
  if (!first) return undefined;
  return new ConnectError(`${first.field}: ${first.description}`, Code.InvalidArgument, undefined, [
    { desc: FieldViolationsSchema, value: { violations: [...list] } },
  ]);
}

export const invalid = (field: string, description: string): ConnectError =>
  violations([{ field, description }]) as ConnectError;
export const notFound = (what: string) => new ConnectError(`no such ${what} in this project`, Code.NotFound);
export const exhausted = (message: string) => new ConnectError(message, Code.ResourceExhausted);

/** Bounds per project (automation.proto). */
export const maxSchedules = 50;
export const maxWebhooks = 20;
export const maxBadges = 100;
