import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { IORedisInstrumentation } from "@opentelemetry/instrumentation-ioredis";
import { KoaInstrumentation } from "@opentelemetry/instrumentation-koa";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { withoutKeys } from "../logger.js";

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
      // Incoming HTTP is the gateway's and the console's. Keys travel in headers, but one pasted
      // in place of a run id would be in the URL: its key-shaped parts are replaced.
      new HttpInstrumentation({
        ignoreOutgoingRequestHook: () => true,
        startIncomingSpanHook: (request) => urlAttributesWithoutKeys(request.url ?? "/"),
      }),
      new KoaInstrumentation(),
      // MikroORM sends statements with their values written in (em.execute's parameters too), so
      // the recorded text would carry badge tokens, sealed secrets and whatever else a row holds:
      // its string literals are replaced.
      new PgInstrumentation({
        enhancedDatabaseReporting: false,
        requestHook: (span, { query }) => {
          const recorded = (span as unknown as { attributes?: Record<string, unknown> }).attributes ?? {};
          for (const key of ["db.query.text", "db.statement"])
            if (typeof recorded[key] === "string") span.setAttribute(key, withoutLiterals(query.text));
        },
      }),
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

/** SQL text with every string literal ('…', quotes doubled inside) written as '?'. */
export const withoutLiterals = (sql: string) => sql.replace(/'(?:[^']|'')*'/g, "'?'");

/**
 * The console's public badge route, `/badges/{token}.svg` (docs/automation.md, "Badges"): the
 * token is the right to read the badge, kept out of traces as out of the console's log lines.
 */
const withoutBadgeToken = (path: string) => path.replace(/^\/badges\/[^/]*$/, "/badges/[token].svg");

/**
 * The span attributes of an incoming request's URL (`/path?query`, as the request line has it)
 * that would carry a key-shaped part, with it replaced; they override the instrumentation's own.
 */
function urlAttributesWithoutKeys(url: string): Record<string, string> {
  const queryAt = url.indexOf("?");
  const path = queryAt < 0 ? url : url.slice(0, queryAt);
  const query = queryAt < 0 ? "" : url.slice(queryAt + 1);
  const attributes: Record<string, string> = {};
  const tracedPath = withoutBadgeToken(withoutKeys(path));
  if (tracedPath !== path) attributes["url.path"] = tracedPath;
  if (withoutKeys(query) !== query) attributes["url.query"] = withoutKeys(query);
  return attributes;
}
