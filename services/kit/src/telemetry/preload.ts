// Loaded with `node --import` before a service's main module, so instrumentation can patch the
// libraries it traces before they are first imported. Does nothing unless tracing is configured,
// and then loads nothing of the SDK either: start-up stays fast.
import { register } from "node:module";

if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) {
  // ESM modules are only patchable through the loader hook. Only the libraries we instrument go
  // through it: wrapping every module (our own TypeScript included) fails and slows start-up.
  register("@opentelemetry/instrumentation/hook.mjs", import.meta.url, {
    data: { include: ["pg", "ioredis", "koa", "@koa/router", "undici"] },
  });
  const { startTelemetry } = await import("./sdk.js");
  startTelemetry(process.env.OTEL_SERVICE_NAME ?? "testrun");
}
