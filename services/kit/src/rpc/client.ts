import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { clientTracingInterceptor } from "../telemetry/interceptors.js";
import { bearerTokenInterceptor } from "./auth.js";
import { retryRepeatableInterceptor } from "./retry.js";

export interface ServiceClientOptions {
  /** The caller's internal token (SERVICE_TOKEN, or EXECUTOR_TOKEN for executors). */
  token: string;
  /** Deadline of every call unless the call sets its own; no call may wait for ever. */
  timeoutMs?: number;
}

/**
 * A client of another Testrun service, presenting our token and carrying the trace; calls safe to
 * repeat are repeated once when the server was unavailable (each attempt its own span). It speaks
 * the Connect protocol, binary over HTTP/2: same codes and details as gRPC, less work per call
 * (docs/architecture.md, "Clients").
 */
export function serviceClient<S extends DescService>(
  service: S,
  baseUrl: string,
  options: ServiceClientOptions,
): Client<S> {
  const transport = createConnectTransport({
    baseUrl,
    httpVersion: "2",
    useBinaryFormat: true,
    defaultTimeoutMs: options.timeoutMs ?? 5_000,
    interceptors: [
      retryRepeatableInterceptor,
      clientTracingInterceptor,
      bearerTokenInterceptor(options.token),
    ],
  });
  return createClient(service, transport);
}
