// The forward proxy every byte a browser sends goes through (docs/runs.md, "Egress"): chromium is
// launched with this proxy for every URL, loopback included (chromium-flags.ts), and the proxy
// makes each of its connections with the executor's EgressGuard, so a page cannot reach what an
// HTTP step cannot: each address is resolved once, checked, and connected to as checked.
//
// Two kinds of request reach it:
// - plain HTTP in absolute form (`GET http://host/path`): sent on with the guard's undici
//   dispatcher, which connects through the guard; redirects are handed back to the browser, whose
//   next request comes here again and is checked again;
// - CONNECT host:port (https:, ws:, wss:): a tunnel to a socket from `EgressGuard.connect`.
// Nothing else (an origin-form request, an Upgrade without CONNECT, another scheme) is served.
//
// No library does this: npm's `proxy` and `http-proxy` open their connections themselves, so the
// guard could not make them. node:http parses the requests; what is left is small.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { once } from "node:events";
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
  STATUS_CODES,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { pipeline } from "node:stream";
import type { Logger } from "@testrun/kit";
import type { EgressGuard } from "@testrun/kit/egress";
import type { Dispatcher } from "undici";

export interface EgressProxyOptions {
  /**
   * Connections to targets open at once: CONNECT tunnels plus plain requests in flight. Past it a
   * request is answered 503 and nothing is connected. Default 256 (chromium opens at most 32 per
   * proxy for each context, and a few contexts share a proxy).
   */
  maxTargetConnections?: number;
  /** Connections to the proxy itself open at once; more are closed as they arrive. Default 1024. */
  maxClientConnections?: number;
  /** Bytes of a request's line and headers; more is answered 431. Default 32 KiB (cookies add up). */
  maxHeaderBytes?: number;
  /** Time to resolve and connect a target; past it, the 502 of any target not reached. Default 10 s. */
  connectTimeoutMs?: number;
  /**
   * Time without a byte either way before a tunnel, a request or an idle connection to the proxy
   * is closed. Default 120 s: the longest a browser step may wait (step.proto, `timeout_ms`).
   */
  idleTimeoutMs?: number;
  /**
   * Where each refused or failed connection is logged, at debug level (a page may try thousands):
   * its cause (EGRESS_REFUSED, ECONNREFUSED, …) only, never the host, as for HTTP steps.
   */
  logger?: Logger;
}

/** A running proxy: what Playwright's `proxy` launch option takes, and a way to stop it. */
export interface EgressProxy {
  /** `http://127.0.0.1:<port>`. */
  server: string;
  /** Basic credentials the proxy requires: random for each proxy, so nothing else on the host can use it. */
  username: string;
  password: string;
  /** Connections to targets open now (tunnels and plain requests in flight). */
  readonly targetConnections: number;
  /** Stops listening and closes every connection, tunnels included. */
  close(): Promise<void>;
}

export const egressProxyDefaults = {
  maxTargetConnections: 256,
  maxClientConnections: 1024,
  maxHeaderBytes: 32 * 1024,
  connectTimeoutMs: 10_000,
  idleTimeoutMs: 120_000,
} as const;

/** The one answer for a target that could not be reached, whatever the reason (docs/runs.md, "Egress"). */
const unreachable = "could not connect to the host";

/**
 * Headers that describe one connection, not the message (RFC 9110, 7.6.1), and the proxy's own
 * credentials: never sent on. `host` is set from the request's URL instead.
 */
const hopByHop = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect",
  "host",
]);

/** Headers without the hop-by-hop ones, nor those the Connection header names. */
function endToEnd(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>) {
  const named = String(headers.connection ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase());
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && !hopByHop.has(name) && !named.includes(name)) kept[name] = value;
  return kept;
}

/**
 * Starts the proxy on 127.0.0.1 (an ephemeral port) for `guard`'s connections. The browser sends
 * the credentials with Playwright's `proxy: { server, username, password }` (browserLaunchOptions).
 */
export async function startEgressProxy(
  guard: EgressGuard,
  options: EgressProxyOptions = {},
): Promise<EgressProxy> {
  const o = { ...egressProxyDefaults, ...options };
  const username = "testrun";
  const password = randomBytes(24).toString("base64url");
  const expected = digest(`Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`);
  const authorized = (req: IncomingMessage) => {
    const given = req.headers["proxy-authorization"];
    return typeof given === "string" && timingSafeEqual(digest(given), expected);
  };

  /** Client sockets of open tunnels, so that close() can end them. */
  const tunnels = new Set<Socket>();
  let targetConnections = 0;
  /** Takes a target connection if one is left; the caller gives it back with the returned function. */
  const takeTargetConnection = (): (() => void) | undefined => {
    if (targetConnections >= o.maxTargetConnections) return undefined;
    targetConnections += 1;
    let given = false;
    return () => {
      if (!given) targetConnections -= 1;
      given = true;
    };
  };
  const logFailure = (what: string, error: unknown) =>
    o.logger?.debug({ cause: causeOf(error) }, `browser ${what}: ${unreachable}`);

  const server = createServer({ maxHeaderSize: o.maxHeaderBytes }, (req, res) => {
    if (!authorized(req)) return refuseUnauthorized(res);
    const target = absoluteHttpUrl(req.url ?? "");
    if (!target) return answer(res, 400, "only absolute http: URLs and CONNECT are served by this proxy");
    const release = takeTargetConnection();
    if (!release) return answer(res, 503, "too many connections through the egress proxy");
    res.once("close", release);
    forward(req, res, target, guard.dispatcher, (error) => logFailure("request", error));
  });
  server.maxConnections = o.maxClientConnections;
  // Idle connections (chromium keeps them for the next request) and slow clients are closed.
  server.timeout = o.idleTimeoutMs;
  server.keepAliveTimeout = o.idleTimeoutMs;
  server.headersTimeout = o.idleTimeoutMs;
  server.requestTimeout = 0;

  // WebSockets through a proxy are CONNECT tunnels; an Upgrade sent as a plain request is not served.
  server.on("upgrade", (_req: IncomingMessage, socket: Socket) => {
    socket.end(rawAnswer(501, "use CONNECT for WebSockets"));
  });

  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    client.on("error", () => {});
    if (!authorized(req)) {
      client.end(
        rawAnswer(407, "proxy authentication required", {
          "Proxy-Authenticate": 'Basic realm="testrun egress"',
        }),
      );
      return;
    }
    const target = hostAndPort(req.url ?? "");
    if (!target) return void client.end(rawAnswer(400, "CONNECT takes host:port"));
    const release = takeTargetConnection();
    if (!release) return void client.end(rawAnswer(503, "too many connections through the egress proxy"));
    client.once("close", release);
    tunnels.add(client);
    client.once("close", () => tunnels.delete(client));
    tunnel(client, head, target, guard, o, (error) => logFailure("tunnel", error));
  });

  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;

  return {
    server: `http://127.0.0.1:${port}`,
    username,
    password,
    get targetConnections() {
      return targetConnections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Tunnels left node:http's hands at CONNECT: closeAllConnections does not end them.
        server.closeAllConnections();
        for (const socket of tunnels) socket.destroy();
      }),
  };
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** The error's code (EGRESS_REFUSED, ECONNREFUSED, ENOTFOUND, …) or name, for a log line. */
function causeOf(error: unknown): string {
  if (error && typeof error === "object") {
    const { code, name } = error as { code?: unknown; name?: unknown };
    if (typeof code === "string") return code;
    if (typeof name === "string") return name;
  }
  return "unknown";
}

function refuseUnauthorized(res: ServerResponse): void {
  res.setHeader("proxy-authenticate", 'Basic realm="testrun egress"');
  answer(res, 407, "proxy authentication required");
}

/** A short text answer from the proxy itself, after which the client's connection is closed. */
function answer(res: ServerResponse, status: number, text: string): void {
  res.shouldKeepAlive = false;
  res.writeHead(status, {
    "content-type": "text/plain; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

/** The same for a raw socket (CONNECT and Upgrade have left node:http's response behind). */
function rawAnswer(status: number, text: string, headers: Record<string, string> = {}): string {
  const lines = Object.entries({
    ...headers,
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Length": String(Buffer.byteLength(text)),
    Connection: "close",
  }).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${lines.join("")}\r\n${text}`;
}

/** The URL of a proxy request in absolute form (`GET http://host/path`), if it is one for http:. */
function absoluteHttpUrl(requestTarget: string): URL | undefined {
  if (!/^http:\/\//i.test(requestTarget)) return undefined;
  try {
    const url = new URL(requestTarget);
    return url.username === "" && url.password === "" ? url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CONNECT's `host:port` (`[v6]:port` for IPv6), the host as the URL parser normalises it (so
 * `2130706433` is 127.0.0.1, as it would be in a URL). Undefined for anything else.
 */
function hostAndPort(authority: string): { host: string; port: number } | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^\s/?#@[\]:]+):(\d{1,5})$/.exec(authority);
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  try {
    return { host: new URL(`http://${match[1]}/`).hostname, port };
  } catch {
    return undefined;
  }
}

/** Sends a plain request on through the guard's dispatcher and the answer back, streamed. */
function forward(
  req: IncomingMessage,
  res: ServerResponse,
  target: URL,
  dispatcher: Dispatcher,
  onFailure: (error: unknown) => void,
): void {
  const abort = new AbortController();
  res.once("close", () => abort.abort());
  const hasBody =
    req.headers["content-length"] !== undefined || req.headers["transfer-encoding"] !== undefined;
  dispatcher
    .request({
      origin: target.origin,
      path: `${target.pathname}${target.search}`,
      method: req.method as Dispatcher.HttpMethod,
      headers: endToEnd(req.headers),
      body: hasBody ? req : null,
      signal: abort.signal,
      // The client's socket is closed after idleTimeoutMs without a byte (server.timeout), which
      // aborts this request: one bound for a silent target, a stalled upload and an idle client.
      headersTimeout: 0,
      bodyTimeout: 0,
    })
    .then(({ statusCode, headers, body }) => {
      res.writeHead(statusCode, endToEnd(headers));
      pipeline(body, res, () => {});
    })
    .catch((error: unknown) => {
      if (abort.signal.aborted) return;
      onFailure(error);
      if (res.headersSent) res.destroy();
      else answer(res, 502, unreachable);
    });
}

/** Connects `target` through the guard and joins it to the client's socket, both ways. */
function tunnel(
  client: Socket,
  head: Buffer,
  target: { host: string; port: number },
  guard: EgressGuard,
  o: { connectTimeoutMs: number; idleTimeoutMs: number },
  onFailure: (error: unknown) => void,
): void {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error("connect timed out"), { code: "ETIMEDOUT" })),
      o.connectTimeoutMs,
    );
  });
  const connecting = guard.connect(target.host, target.port);
  Promise.race([connecting, timedOut]).then(
    (upstream) => {
      clearTimeout(timer);
      if (client.destroyed) return void upstream.destroy();
      upstream.on("error", () => client.destroy());
      client.on("error", () => upstream.destroy());
      for (const socket of [client, upstream])
        socket.setTimeout(o.idleTimeoutMs, () => {
          client.destroy();
          upstream.destroy();
        });
      client.once("close", () => upstream.destroy());
      upstream.once("close", () => client.destroy());
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      client.pipe(upstream);
      upstream.pipe(client);
    },
    (error: unknown) => {
      clearTimeout(timer);
      // A connection that arrives after the timeout is closed as it arrives.
      connecting.then(
        (late) => late.destroy(),
        () => {},
      );
      onFailure(error);
      client.end(rawAnswer(502, unreachable));
    },
  );
}
