import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { IORedisInstrumentation } from "@opentelemetry/instrumentation-ioredis";
import { KoaInstrumentation } from "@opentelemetry/instrumentation-koa";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { NodeSDK } from "@opentelemetry/sdk-node";

let sdk: NodeSDK | undefined;

/** Whether traces are exported: tracing is off unless a collector endpoint is configured. */
export const tracingEnabled = (): boolean => Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT);

/**
 * Starts the OpenTelemetry SDK exporting traces over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT.
 * Called from the preload, before the instrumented libraries are imported.
 */
export function startTelemetry(serviceName: string): void {
  if (sdk || !tracingEnabled()) return;
  sdk = new NodeSDK({
    serviceName,
    traceExporter: new OTLPTraceExporter(),
    instrumentations: [
      // Incoming HTTP is the gateway's; its URLs hold no secrets (keys travel in headers).
      new HttpInstrumentation({ ignoreOutgoingRequestHook: () => true }),
      new KoaInstrumentation(),
      new PgInstrumentation({ enhancedDatabaseReporting: false }),
      new IORedisInstrumentation(),
      // No undici (fetch) instrumentation: it records each request's full URL, and the executor's
      // requests carry interpolated variable values in paths and queries.
    ],
  });
  sdk.start();
}

/** Flushes and stops the SDK. A missing collector must not turn a clean shutdown into a crash. */
export async function stopTelemetry(): Promise<void> {
  const running = sdk;
  sdk = undefined;
  await running?.shutdown().catch(() => undefined);
}
