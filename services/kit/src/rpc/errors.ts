import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "pino";

/** Services that are called constantly by probes and tools; their calls are not logged. */
const quietServices = new Set(["grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"]);

/**
 * Logs every call's outcome with its duration, and turns any error that is not a deliberate
 * ConnectError into a bare INTERNAL: a driver's message can carry SQL or data, and must stay in
 * our logs rather than reach the caller. A call that succeeded is logged at debug: services call
 * each other constantly (the automation service follows finished runs every second), and at info
 * those lines would bury the events a person looks for (docs/operations.md, "Logs").
 */
export function callLoggingInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const rpc = `${req.service.typeName}/${req.method.name}`;
    const quiet = quietServices.has(req.service.typeName);
    try {
      const res = await next(req);
      if (!quiet) logger.debug({ rpc, ms: Math.round(performance.now() - started) }, "rpc ok");
      return res;
    } catch (error) {
      const ms = Math.round(performance.now() - started);
      if (error instanceof ConnectError) {
        logger.info({ rpc, ms, code: Code[error.code] }, "rpc failed");
        throw error;
      }
      logger.error({ rpc, ms, err: error }, "rpc crashed");
      throw new ConnectError("internal error", Code.Internal);
    }
  };
}
