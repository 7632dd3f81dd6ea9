import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { ServiceContext } from "./service.js";

/** An HTTP/1.1 application (a Koa app's `callback()` or anything with `listen`). */
interface Listenable {
  listen(port: number, host: string): Server;
}

/**
 * Serves a service's browser- or pipeline-facing HTTP port next to its gRPC port (the gateway's
 * /v1, the console), and closes it in the service's graceful shutdown: once the drain is over it
 * takes no new connections, requests in flight finish within SHUTDOWN_TIMEOUT_MS, idle keep-alive
 * connections close at once.
 */
export async function serveHttp(
  app: Listenable,
  options: {
    port: number;
    host: string;
    logger: Logger;
    shutdownTimeoutMs: number;
    onShutdown: ServiceContext<unknown>["onShutdown"];
  },
): Promise<Server> {
  const server = app.listen(options.port, options.host);
  // Outlast the 60 s idle timeout of ingresses and ALBs, so they close idle connections, not we (502s).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await once(server, "listening");
  options.logger.info({ httpPort: (server.address() as AddressInfo).port }, "http listening");
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
