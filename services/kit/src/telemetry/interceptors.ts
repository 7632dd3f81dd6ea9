import type { Interceptor } from "@connectrpc/connect";
import { ConnectError } from "@connectrpc/connect";
import {
  type Context,
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapSetter,
  trace,
} from "@opentelemetry/api";

// OpenTelemetry instruments neither Connect nor node:http2, so these two interceptors make the
// client and server spans of every RPC and carry `traceparent` between them.
const tracer = trace.getTracer("@testrun/kit");

const headerGetter: TextMapGetter<Headers> = {
  keys: (headers) => [...headers.keys()],
  get: (headers, key) => headers.get(key) ?? undefined,
};
const headerSetter: TextMapSetter<Headers> = {
  set: (headers, key, value) => headers.set(key, value),
};

function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined) {
    const connectError = ConnectError.from(error);
    // The code, never the message: messages may quote user input.
    span.setAttribute("rpc.grpc.status_code", connectError.code);
    span.setStatus({ code: SpanStatusCode.ERROR });
  } else {
    span.setAttribute("rpc.grpc.status_code", 0);
  }
  span.end();
}

/** Runs `work` with `span` active, ending the span with the outcome. */
async function inSpan<T>(span: Span, ctx: Context, work: () => Promise<T>): Promise<T> {
  return context.with(ctx, async () => {
    try {
      const result = await work();
      endSpan(span);
      return result;
    } catch (error) {
      endSpan(span, error);
      throw error;
    }
  });
}

const rpcAttributes = (service: string, method: string) => ({
  "rpc.system": "grpc",
  "rpc.service": service,
  "rpc.method": method,
});

/** Server side: continues the caller's trace (if any) in a SERVER span around the handler. */
export const serverTracingInterceptor: Interceptor = (next) => async (req) => {
  const parent = propagation.extract(context.active(), req.header, headerGetter);
  const span = tracer.startSpan(
    `${req.service.typeName}/${req.method.name}`,
    { kind: SpanKind.SERVER, attributes: rpcAttributes(req.service.typeName, req.method.name) },
    parent,
  );
  return inSpan(span, trace.setSpan(parent, span), () => next(req));
};

/** Client side: a CLIENT span per call, whose context travels in the request headers. */
export const clientTracingInterceptor: Interceptor = (next) => async (req) => {
  const span = tracer.startSpan(`${req.service.typeName}/${req.method.name}`, {
    kind: SpanKind.CLIENT,
    attributes: rpcAttributes(req.service.typeName, req.method.name),
  });
  const ctx = trace.setSpan(context.active(), span);
  propagation.inject(ctx, req.header, headerSetter);
  return inSpan(span, ctx, () => next(req));
};
