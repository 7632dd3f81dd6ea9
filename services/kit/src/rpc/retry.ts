import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

const repeatable = new Set([
  MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS,
  MethodOptions_IdempotencyLevel.IDEMPOTENT,
]);

/**
 * Repeats a unary call once when it failed as UNAVAILABLE, if its method is marked in the protos as
 * safe to repeat (`idempotency_level`). During a rolling update a call can meet a connection whose
 * server has just sent GOAWAY and refuses new streams; the repeat opens a connection to a replica
 * that stays. Calls with effects (StartRun, ChargeRun) are never repeated here: their callers
 * decide what a repeat means.
 */
export const retryRepeatableInterceptor: Interceptor = (next) => async (req) => {
  if (req.stream || !repeatable.has(req.method.idempotency)) return next(req);
  try {
    return await next(req);
  } catch (error) {
    if (req.signal.aborted || ConnectError.from(error).code !== Code.Unavailable) throw error;
    return next(req);
  }
};
