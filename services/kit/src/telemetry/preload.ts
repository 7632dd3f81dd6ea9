// Loaded with `node --import` before a service's main module, so instrumentation can patch the
// libraries it traces before they are first imported. Does nothing unless tracing is configured,
// and then loads nothing of the SDK either: start-up stays fast.
import { register } from "node:module";

if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) {
  // ESM modules are only patchable through the loader hook.
  register("@opentelemetry/instrumentation/hook.mjs", import.meta.url);
  const { startTelemetry } = await import("./sdk.js");
  startTelemetry(process.env.OTEL_SERVICE_NAME ?? "testrun");
}
