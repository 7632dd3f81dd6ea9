import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { DescService } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ConnectRouterOptions,
  type Interceptor,
  type ServiceImpl,
} from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { Health } from "@testrun/gen/grpc/health/v1/health_pb";
import { ServerReflection } from "@testrun/gen/grpc/reflection/v1/reflection_pb";
import type { Logger } from "pino";
import { recordRpc, rpcMetricsInterceptor } from "../metrics/red.js";
import { serverTracingInterceptor } from "../telemetry/interceptors.js";
import { type CallerIdentity, serviceTokenGate } from "./auth.js";
import { serviceReadMaxBytes, unparsableBodyIsInvalidArgument } from "./bodies.js";
import { withEarlyClose } from "./early-close.js";
import { callLoggingInterceptor } from "./errors.js";
import { withSpecGrpcMessage } from "./grpc-message.js";
import { HealthRegistry, ServingStatus } from "./health.js";
import { nulTextInterceptor } from "./nul-text.js";
import { reflectionImpl } from "./reflection.js";

/** A service implementation to serve, paired with its descriptor. */
export interface ServiceBinding {
  desc: DescService;
  // biome-ignore lint/suspicious/noExplicitAny: any service's implementation.
  impl: Partial<ServiceImpl<any>>;
  /** Methods (proto names, e.g. "ClaimTest") the executor identity may call; none by default. */
  executorMethods?: readonly string[];
  /** Fields (`<message type name>.<field local name>`, e.g. `….CreateVariableRequest.value`) whose text may hold NUL: never stored as text. */
  nulAllowed?: readonly string[];
  /**
   * Methods (proto names) whose requests may be larger than `serviceReadMaxBytes`, with their own
   * bound (the runs service's PutArtifact, which carries an artifact); every other method keeps it.
   */
  readMaxBytes?: Readonly<Record<string, number>>;
}

/**
 * A service put together from its dependencies (each service's `wiring.ts`): what it serves, and
 * how to stop its background work. Its main.ts serves it through `runService`; tests serve it
 * in-process (`inProcessRpc`, @testrun/testing) or the same way main.ts does.
 */
export interface ServiceWiring {
  services: ServiceBinding[];
  /** Stops the background work the wiring started (last started, first stopped). */
  stop(): Promise<void>;
}

/** Typed helper so `impl` is checked against its descriptor. */
export const bind = <S extends DescService>(
  desc: S,
  impl: Partial<ServiceImpl<S>>,
  executorMethods: readonly string[] = [],
  nulAllowed: readonly string[] = [],
): ServiceBinding => ({ desc, impl, executorMethods, nulAllowed });

/**
 * A service's implementation put together from its handler groups (each service's rpc/: some of
 * its methods each). A method left out would answer UNIMPLEMENTED: refuse to start instead.
 */
export function fromHandlerGroups<S extends DescService>(
  desc: S,
  ...groups: readonly Partial<ServiceImpl<S>>[]
): ServiceImpl<S> {
  const handlers: Record<string, unknown> = Object.assign({}, ...groups);
  const missing = desc.methods.filter((method) => !handlers[method.localName]);
  if (missing.length > 0)
    throw new Error(`${desc.name} methods not implemented: ${missing.map((m) => m.name)}`);
  return handlers as ServiceImpl<S>;
}

/**
 * Registers a service method by method, each with the request bound `readMaxBytes` names for it or
 * the services' own (`serviceReadMaxBytes`): connect's bound is per handler, not per message.
 */
function serviceWithBounds(
  router: ConnectRouter,
  desc: DescService,
  // biome-ignore lint/suspicious/noExplicitAny: any service's implementation.
  impl: Partial<ServiceImpl<any>>,
  readMaxBytes: Readonly<Record<string, number>>,
): void {
  const unknown = Object.keys(readMaxBytes).filter((name) => !desc.methods.some((m) => m.name === name));
  if (unknown.length > 0) throw new Error(`${desc.typeName} has no methods ${unknown.join(", ")}`);
  for (const method of desc.methods) {
    const handler = impl[method.localName];
    if (typeof handler !== "function") throw new Error(`${desc.typeName}.${method.name} is not implemented`);
    // The handler of this method kind (the types cannot follow one method at a time).
    router.rpc(method, handler.bind(impl) as never, {
      readMaxBytes: readMaxBytes[method.name] ?? serviceReadMaxBytes,
    });
  }
}

export interface RpcServerOptions {
  services: readonly ServiceBinding[];
  host: string;
  port: number;
  tokens: Partial<Record<CallerIdentity, string>>;
  logger: Logger;
  /** Streams (calls) one connection may have open at once; `defaultStreamsPerConnection` unless set. */
  streamsPerConnection?: number;
  /** HTTP/2 connections held at once (RPC_MAX_CONNECTIONS); `defaultRpcConnections` unless set. */
  maxConnections?: number;
  /** Seconds a connection may stay without a frame and without a stream before GOAWAY (RPC_IDLE_TIMEOUT_SECONDS). */
  idleTimeoutSeconds?: number;
}

/**
 * Connections a service port holds at once, unless the service's config says (RPC_MAX_CONNECTIONS):
 * with `sessionMemoryMiB` and `defaultStreamsPerConnection` each, the worst case is far above a
 * pod's memory, but what a connection costs in practice (docs/security.md, "Resource limits") keeps
 * 500 of them within one. Past it a new connection is closed as it opens.
 */
export const defaultRpcConnections = 500;

/** Seconds an HTTP/2 connection may stay quiet with no stream open, unless set (RPC_IDLE_TIMEOUT_SECONDS). */
export const defaultRpcIdleSeconds = 300;

/**
 * Calls one connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS), unless the service
 * sets its own (the runs service, whose WatchRun streams last). Past it a client's stream is refused
 * (REFUSED_STREAM, safe to retry); connect-node and @grpc/grpc-js never get there: they hold the
 * call until a stream of theirs ends. Node's default, 2^32 - 1, let one anonymous connection hold
 * streams (and what they buffer) without end (docs/security.md, "Resource limits").
 */
export const defaultStreamsPerConnection = 100;

/**
 * What nghttp2 may hold for one connection (headers, frames queued, in MB): past it new streams are
 * refused (ENHANCE_YOUR_CALM) until it drains. Node's default, stated so it stays bounded.
 */
export const sessionMemoryMiB = 10;

export interface RpcServer {
  readonly port: number;
  readonly health: HealthRegistry;
  /**
   * Stops taking calls and lets those in flight finish: NOT_SERVING first, then GOAWAY on every
   * connection; after `timeoutMs` whatever is left is cut off.
   */
  shutdown(timeoutMs: number): Promise<void>;
}

/** How calls reach a service's handlers, whatever carries them: a socket or a router transport. */
export interface RpcRouting {
  /** Registers the services, grpc.health.v1 and gRPC reflection v1 on a Connect router. */
  routes(router: ConnectRouter): void;
  /** Interceptors, body bounds and the service-token gate: what every call goes through first. */
  options: ConnectRouterOptions;
  readonly health: HealthRegistry;
}

/**
 * The routes and the per-call checks of a service, shared by `startRpcServer` and the tests'
 * in-process transport (`inProcessRpc`, @testrun/testing), so both run the same gate and
 * interceptors in front of the same handlers (docs/development.md, "Tests").
 */
export function rpcRouting(options: Pick<RpcServerOptions, "services" | "tokens" | "logger">): RpcRouting {
  const health = new HealthRegistry(options.services.map((s) => s.desc.typeName));
  const interceptors: Interceptor[] = [
    rpcMetricsInterceptor,
    serverTracingInterceptor,
    callLoggingInterceptor(options.logger),
    nulTextInterceptor(new Set(options.services.flatMap((s) => s.nulAllowed ?? []))),
  ];
  const tokenGate = serviceTokenGate(
    options.tokens,
    new Set(options.services.flatMap((s) => (s.executorMethods ?? []).map((m) => `${s.desc.typeName}/${m}`))),
  );
  const exposed = [...options.services.map((s) => s.desc), Health, ServerReflection];
  const routes = (router: ConnectRouter) => {
    for (const { desc, impl, readMaxBytes } of options.services) {
      if (!readMaxBytes) router.service(desc, impl);
      else serviceWithBounds(router, desc, impl, readMaxBytes);
    }
    router.service(Health, health.impl());
    router.service(ServerReflection, reflectionImpl(exposed));
  };
  return {
    routes,
    health,
    options: {
      interceptors,
      // Bodies are bounded (docs/security.md, "Resource limits"), and no body is read before the
      // token is checked. Compressed requests stay accepted: only callers holding a token, and the
      // public health and reflection, get them inflated, never beyond the bound.
      readMaxBytes: serviceReadMaxBytes,
      requestGate: (context) => {
        const started = performance.now();
        unparsableBodyIsInvalidArgument(context);
        try {
          tokenGate(context);
        } catch (error) {
          // The interceptors never see a call refused here: log it as they would a failed call,
          // so that probing with a wrong token still shows in the service's log.
          const code = error instanceof ConnectError ? Code[error.code] : undefined;
          // Counted as the interceptors would have: refusals are what a dashboard must show.
          recordRpc(context.service.typeName, context.method.name, started, error);
          options.logger.info(
            { rpc: `${context.service.typeName}/${context.method.name}`, code },
            "rpc refused",
          );
          throw error;
        }
      },
    },
  };
}

/**
 * Serves the given services, plus grpc.health.v1 and gRPC reflection v1, over HTTP/2 cleartext
 * speaking gRPC, gRPC-Web and Connect. Health starts NOT_SERVING: call `health.setAll(SERVING)`
 * once the process is ready.
 */
export async function startRpcServer(options: RpcServerOptions): Promise<RpcServer> {
  const { routes, options: routerOptions, health } = rpcRouting(options);
  const adapter = connectNodeAdapter({ routes, ...routerOptions });
  const server = http2.createServer(
    {
      settings: { maxConcurrentStreams: options.streamsPerConnection ?? defaultStreamsPerConnection },
      maxSessionMemory: sessionMemoryMiB,
    },
    withEarlyClose(withSpecGrpcMessage(adapter)),
  );
  // net.Server's cap: a connection past it is closed as it opens, before any HTTP/2 is spoken.
  server.maxConnections = options.maxConnections ?? defaultRpcConnections;
  const idleMs = (options.idleTimeoutSeconds ?? defaultRpcIdleSeconds) * 1000;
  const sessions = new Set<http2.ServerHttp2Session>();
  // Connections without a stream open, and since when (oldest first): what makes room at the cap.
  const streamless = new Map<http2.ServerHttp2Session, number>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => {
      sessions.delete(session);
      streamless.delete(session);
    });
    trackStreams(session, idleMs, streamless);
  });
  let sweeping = false;
  server.on("drop", () => {
    // At the cap, connections that have had no stream open for over a second get GOAWAY (their
    // clients reconnect when they next call), so that idle or silent connections cannot keep a
    // caller out. A burst of refused connections sweeps once.
    if (sweeping) return;
    sweeping = true;
    setImmediate(() => {
      sweeping = false;
      const cutoff = performance.now() - 1_000;
      for (const [session, since] of streamless) {
        if (since > cutoff) break;
        streamless.delete(session);
        if (!session.closed && !session.destroyed) session.close();
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });

  return {
    port: (server.address() as AddressInfo).port,
    health,
    async shutdown(timeoutMs) {
      health.setAll(ServingStatus.NOT_SERVING);
      health.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // GOAWAY: clients open no new streams here; streams already open run to completion.
      for (const session of sessions) session.close();
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<"deadline">((resolve) => {
        timer = setTimeout(() => resolve("deadline"), timeoutMs);
      });
      if ((await Promise.race([closed, deadline])) === "deadline") {
        options.logger.warn({ open: sessions.size }, "shutdown deadline passed; cutting off calls in flight");
        for (const session of sessions) session.destroy();
        await closed;
      }
      clearTimeout(timer);
    },
  };
}

/**
 * Keeps `streamless` (connections with no stream open, since when) up to date, and closes (GOAWAY)
 * a connection that has been quiet for `idleMs` with no stream open: a client that opened one and
 * never called holds a descriptor and a session's memory. A quiet connection with a stream open (a
 * WatchRun waiting for news) is left alone: the stream is the call's business.
 */
function trackStreams(
  session: http2.ServerHttp2Session,
  idleMs: number,
  streamless: Map<http2.ServerHttp2Session, number>,
): void {
  let open = 0;
  streamless.set(session, performance.now());
  session.on("stream", (stream) => {
    if (open++ === 0) streamless.delete(session);
    stream.once("close", () => {
      if (--open === 0 && !session.closed) streamless.set(session, performance.now());
    });
  });
  session.setTimeout(idleMs, () => {
    if (open === 0 && !session.closed && !session.destroyed) session.close();
  });
}
