import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { counter, durationHistogram, recordingMetrics } from "./registry.js";

// RED metrics of every component (docs/operations.md, "Metrics"): rate, errors and duration of the
// RPCs it serves and, for the gateway and the console, of its HTTP requests.

export const rpcRequests = counter(
  "testrun_rpc_server_requests_total",
  "RPCs served, by service, method and Connect code (snake_case)",
  ["rpc_service", "rpc_method", "code"],
);
export const rpcDuration = durationHistogram(
  "testrun_rpc_server_duration_seconds",
  "RPC duration in seconds (streams: until they end)",
  ["rpc_service", "rpc_method"],
);
export const httpRequests = counter(
  "testrun_http_server_requests_total",
  "HTTP requests, by route template, method and status",
  ["route", "method", "status"],
);
export const httpDuration = durationHistogram(
  "testrun_http_server_duration_seconds",
  "HTTP request duration in seconds",
  ["route", "method"],
);

/** The Connect code's name in snake_case (`ok`, `invalid_argument`, …). */
const codeNames = new Map<Code | undefined, string>(
  Object.values(Code)
    .filter((value): value is Code => typeof value === "number")
    .map((code) => [code, Code[code].replace(/(?<=[a-z])(?=[A-Z])/g, "_").toLowerCase()]),
);
codeNames.set(undefined, "ok");

/** `code` of an error as the metrics label it: what the caller gets (anything else is INTERNAL). */
export const codeLabel = (error?: unknown): string =>
  codeNames.get(
    error === undefined ? undefined : error instanceof ConnectError ? error.code : Code.Internal,
  ) ?? "unknown";

/** Counts one RPC and its duration, from `started` (performance.now()). */
export function recordRpc(service: string, method: string, started: number, error?: unknown): void {
  if (!recordingMetrics()) return;
  rpcRequests.inc({ rpc_service: service, rpc_method: method, code: codeLabel(error) });
  rpcDuration.observe({ rpc_service: service, rpc_method: method }, (performance.now() - started) / 1000);
}

/**
 * RED metrics of every RPC: its code and its duration, a stream's until its last message went (or
 * it failed). The outermost interceptor, so that it sees what the caller gets.
 */
export const rpcMetricsInterceptor: Interceptor = (next) => async (req) => {
  if (!recordingMetrics()) return next(req);
  const started = performance.now();
  const service = req.service.typeName;
  const method = req.method.name;
  let res: Awaited<ReturnType<typeof next>>;
  try {
    res = await next(req);
  } catch (error) {
    recordRpc(service, method, started, error);
    throw error;
  }
  if (!res.stream) {
    recordRpc(service, method, started);
    return res;
  }
  const messages = res.message;
  async function* observed() {
    let failure: unknown;
    try {
      yield* messages;
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      recordRpc(service, method, started, failure);
    }
  }
  return { ...res, message: observed() };
};
