import { Code, ConnectError } from "@connectrpc/connect";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";

/** The one kind of actor a request names; INVALID_ARGUMENT when it names none. */
export function requireActor(actor: Actor | undefined): NonNullable<Actor["kind"]>["case"] {
  const kind = actor?.kind.case;
  if (!kind) throw new ConnectError("actor is required", Code.InvalidArgument);
  return kind;
}

/** Operators only: PERMISSION_DENIED for members and API keys. */
export function requireOperator(actor: Actor | undefined): void {
  if (requireActor(actor) !== "operator") {
    throw new ConnectError("only an operator may do this", Code.PermissionDenied);
  }
}
