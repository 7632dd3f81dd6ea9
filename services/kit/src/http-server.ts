import { once } from "node:events";
import { readFileSync } from "node:fs";
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Logger } from "pino";
import type { ServiceContext } from "./service.js";

/** An HTTP/1.1 application: a Koa app (its `callback()`) or anything else that gives a request listener. */
interface Servable {
  callback(): RequestListener;
}

/** The bounds of an HTTP port (kit config.ts, `httpLimitsConfig`; docs/security.md, "Resource limits"). */
export interface HttpLimits {
  /** Open connections at once; past it a new connection is closed as it opens. */
  maxConnections: number;
  /** Seconds until a request's headers are complete, counted from its first byte or the connection's opening. */
  headersTimeoutSeconds: number;
  /** Seconds a request's whole body may take once its headers are in; then 408 and the connection closes. */
  bodyTimeoutSeconds: number;
  /** Seconds a keep-alive connection waits for its next request. */
  idleTimeoutSeconds: number;
}

/** The bounds of `httpLimitsConfig`'s defaults, for callers (tests) that state none. */
export const defaultHttpLimits: HttpLimits = {
  maxConnections: 4_000,
  headersTimeoutSeconds: 10,
  bodyTimeoutSeconds: 30,
  idleTimeoutSeconds: 65,
};

/** The limits of a config that extends `httpLimitsConfig`. */
export function httpLimitsOf(config: {
  HTTP_MAX_CONNECTIONS: number;
  HTTP_HEADERS_TIMEOUT_SECONDS: number;
  HTTP_BODY_TIMEOUT_SECONDS: number;
  HTTP_IDLE_TIMEOUT_SECONDS: number;
}): HttpLimits {
  return {
    maxConnections: config.HTTP_MAX_CONNECTIONS,
    headersTimeoutSeconds: config.HTTP_HEADERS_TIMEOUT_SECONDS,
    bodyTimeoutSeconds: config.HTTP_BODY_TIMEOUT_SECONDS,
    idleTimeoutSeconds: config.HTTP_IDLE_TIMEOUT_SECONDS,
  };
}

/**
 * At the connection cap, a connection whose first request's headers have not all come after this
 * long is closed to make room (`boundedHttpServer`).
 */
const slowFirstRequestMs = 1_000;

/** Descriptors kept beside the HTTP connections: gRPC clients, Redis, PostgreSQL, files, the other ports. */
const descriptorReserve = 1_000;

/**
 * Serves a service's browser- or pipeline-facing HTTP port next to its gRPC port (the gateway's
 * /v1, the console), bounded as `limits` say (docs/security.md, "Resource limits"), and closes it
 * in the service's graceful shutdown: once the drain is over it takes no new connections, requests
 * in flight finish within SHUTDOWN_TIMEOUT_MS, idle keep-alive connections close at once.
 *
 * - At most `maxConnections` open: a connection past it is closed as it opens (Node's
 *   `maxConnections`, so it costs a descriptor for a moment and no memory), and the idle
 *   keep-alive connections are closed then, with those that have taken over a second to send
 *   their first request (slow headers, or nothing), so a legitimate client's retry finds room.
 * - A connection that sends nothing, or headers too slowly, is closed after `headersTimeoutSeconds`.
 * - A response written before its request's body has arrived (a refusal from the headers: 401,
 *   403, 404, 413, 429...) says `Connection: close` and the connection closes after it, so an
 *   unread body is never waited for.
 * - A body still arriving `bodyTimeoutSeconds` after its headers gets 408 (or, once the answer has
 *   begun, the connection is cut).
 * - `holdContinue`: `Expect: 100-continue` is not answered by Node at once; the application sends
 *   100 Continue (`res.writeContinue()`) when it wants the body, so a refused client never sends it.
 */
export async function serveHttp(
  app: Servable,
  options: {
    port: number;
    host: string;
    logger: Logger;
    shutdownTimeoutMs: number;
    onShutdown: ServiceContext<unknown>["onShutdown"];
    limits?: HttpLimits;
    holdContinue?: boolean;
  },
): Promise<Server> {
  const limits = options.limits ?? defaultHttpLimits;
  const server = boundedHttpServer(app.callback(), limits, options);
  server.listen(options.port, options.host);
  await once(server, "listening");
  options.logger.info({ httpPort: (server.address() as AddressInfo).port }, "http listening");
  const descriptors = openFilesLimit();
  if (descriptors !== undefined && descriptors < limits.maxConnections + descriptorReserve)
    options.logger.warn(
      { openFilesLimit: descriptors, maxConnections: limits.maxConnections },
      "the process may open fewer files than HTTP_MAX_CONNECTIONS needs: raise the container's nofile limit or lower HTTP_MAX_CONNECTIONS",
    );
  // Runs once the drain (SHUTDOWN_DRAIN_MS, during which the server still takes requests) is over.
  options.onShutdown(
    () =>
      new Promise<void>((resolve) => {
        // Requests in flight finish; idle keep-alive connections close now, the rest are cut
        // off when the shutdown deadline comes.
        const deadline = setTimeout(() => server.closeAllConnections(), options.shutdownTimeoutMs);
        deadline.unref();
        server.close(() => {
          clearTimeout(deadline);
          resolve();
        });
        server.closeIdleConnections();
        options.logger.info("http closed to new connections; finishing requests in flight");
      }),
    "closing the HTTP server",
  );
  return server;
}

/** An HTTP/1.1 server with the bounds of `serveHttp` (which says what each does). */
export function boundedHttpServer(
  listener: RequestListener,
  limits: HttpLimits,
  options: { holdContinue?: boolean } = {},
): Server {
  const headersMs = limits.headersTimeoutSeconds * 1000;
  const bodyMs = limits.bodyTimeoutSeconds * 1000;
  const server = createServer(
    {
      headersTimeout: headersMs,
      // Node's own bound on a whole request (headers and body): a backstop behind the body timer
      // below, which answers 408 itself. Node checks both every second here, not every 30 s.
      requestTimeout: headersMs + bodyMs + 5_000,
      keepAliveTimeout: limits.idleTimeoutSeconds * 1000,
      connectionsCheckingInterval: 1_000,
    },
    (req, res) => {
      // The first request has come: the wait for it is over (a keep-alive wait is Node's own).
      req.socket.setTimeout(0);
      // A client that goes away mid-request makes Node destroy the request with an error
      // ("aborted", ECONNRESET), emitted a tick later, and only if the request had an error
      // listener when destroyed. A reader that drops its listener in that tick (Connect's handler
      // does when the response closes) leaves the error with none, and an error event without a
      // listener ends the process: one client's disconnect took the console down in the tests.
      // Whoever reads the body still sees the error; this listener only keeps it from crashing.
      req.on("error", () => {});
      closeWhenBodyUnread(req, res);
      limitBodyTime(req, res, bodyMs, limits.bodyTimeoutSeconds);
      listener(req, res);
    },
  );
  server.maxConnections = limits.maxConnections;
  // Connections that have not yet sent a whole first request, oldest first (a Map keeps order).
  const awaitingRequest = new Map<Socket, number>();
  server.on("connection", (socket: Socket) => {
    // A connection that opens and sends nothing is not a request yet (headersTimeout counts from a
    // request's first byte): it may wait for one as long as headers may take.
    socket.setTimeout(headersMs);
    awaitingRequest.set(socket, performance.now());
    socket.once("close", () => awaitingRequest.delete(socket));
  });
  server.on("request", (req: IncomingMessage) => awaitingRequest.delete(req.socket));
  let sweeping = false;
  server.on("drop", () => {
    // At the cap, room is made for the next attempt: idle keep-alive connections close (their
    // clients reconnect), and so do connections that have taken over `slowFirstRequestMs` to send
    // their first request's headers (a client sends them in milliseconds: slow or silent ones are
    // what fills the cap). A burst of refused connections sweeps once.
    if (sweeping) return;
    sweeping = true;
    setImmediate(() => {
      sweeping = false;
      server.closeIdleConnections();
      const cutoff = performance.now() - slowFirstRequestMs;
      for (const [socket, openedAt] of awaitingRequest) {
        if (openedAt > cutoff) break;
        socket.destroy();
      }
    });
  });
  if (options.holdContinue) server.on("checkContinue", (req, res) => server.emit("request", req, res));
  return server;
}

/** Whether the request has a body that has not all arrived yet. */
const bodyStillArriving = (req: IncomingMessage): boolean => !req.complete;

/**
 * A response that starts before its request's body has arrived closes the connection after it:
 * keeping it alive would mean reading (and waiting for) the rest of a body nobody wants.
 */
function closeWhenBodyUnread(req: IncomingMessage, res: ServerResponse): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse["writeHead"]>) {
    // A client that reset the connection mid-body leaves the request without its socket (null):
    // there is nothing to linger on then, and the answer goes nowhere.
    if (!this.headersSent && bodyStillArriving(req) && req.socket) {
      this.setHeader("Connection", "close");
      lingerOnClose(req.socket);
    }
    return writeHead.apply(this, args);
  } as ServerResponse["writeHead"];
}

/** How long a connection closed after an early answer still reads (and drops) what its client sends. */
const lingerMs = 2_000;

/**
 * A lingering close (as nginx's `lingering_close`): the answer goes out with a FIN, and what the
 * client is still sending is read and dropped for up to `lingerMs`, until it closes its side. Closed
 * at once with bytes unread, the kernel would reset the connection, and a reset can throw the
 * answer away before the client reads it (the client sees a broken pipe, not its 401 or 413).
 */
function lingerOnClose(socket: Socket): void {
  socket.destroySoon = function (this: Socket) {
    if (this.destroyed) return;
    const timer = setTimeout(() => this.destroy(), lingerMs);
    timer.unref();
    this.once("close", () => clearTimeout(timer));
    this.once("end", () => this.destroy());
    this.on("data", () => {});
    this.end();
    this.resume();
  };
}

/** 408 to a body still arriving after `bodyMs`; the connection closes with it. */
function limitBodyTime(req: IncomingMessage, res: ServerResponse, bodyMs: number, seconds: number): void {
  if (!bodyStillArriving(req)) return;
  const timer = setTimeout(() => {
    // Gone already (a reset takes the socket away): no one to answer.
    if (!bodyStillArriving(req) || !req.socket || req.socket.destroyed) return;
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    const body = JSON.stringify({
      error: `the request body did not arrive within ${seconds} s`,
      code: "request_timeout",
    });
    res.writeHead(408, {
      "Content-Type": "application/json; charset=utf-8",
      "Content-Length": Buffer.byteLength(body),
      Connection: "close",
    });
    res.end(body);
  }, bodyMs);
  res.once("close", () => clearTimeout(timer));
}

/** The soft limit on open files of this process (Linux /proc), or undefined where it cannot be read. */
export function openFilesLimit(): number | undefined {
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = line?.split(/\s{2,}/)[1];
    return soft === undefined || soft === "unlimited" ? undefined : Number(soft);
  } catch {
    return undefined;
  }
}

/** What a probe handler touches of a Koa context. */
interface ProbeContext {
  status: number;
  body: unknown;
}

/** The paths of `probeRoutes`: asked every few seconds by the kubelet, so logged at debug only. */
export const probePaths: ReadonlySet<string> = new Set(["/healthz", "/readyz"]);

/**
 * Kubernetes' HTTP probes on a service's HTTP port: `/healthz` (liveness) is 200 while the process
 * runs, draining included (a failed liveness probe would restart it); `/readyz` is 503 from SIGTERM
 * on, so endpoints drop the replica while it still answers. No credential needed, no data returned.
 */
export function probeRoutes(
  router: { get(path: string, handler: (ctx: ProbeContext) => void): unknown },
  isReady: () => boolean,
): void {
  router.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });
  router.get("/readyz", (ctx) => {
    const ready = isReady();
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? "ready" : "not_ready" };
  });
}
