import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { metricsRegistry } from "./registry.js";

/**
 * Serves GET /metrics (Prometheus text format) on its own HTTP/1.1 port: Prometheus cannot scrape
 * h2c (the gRPC port), and the HTTP ports of the gateway and the console go through the ingress,
 * which must never expose this (docs/operations.md, "Metrics"). Anything else is 404.
 */
export async function serveMetrics(options: { port: number; host: string; logger: Logger }): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      const allowed = path !== "/metrics";
      res
        .writeHead(allowed ? 404 : 405, {
          "Content-Type": "text/plain",
          ...(!allowed && { Allow: "GET, HEAD" }),
        })
        .end(allowed ? "not found: the metrics are at /metrics\n" : "method not allowed: GET /metrics\n");
      return;
    }
    metricsRegistry.metrics().then(
      (text) => {
        res.writeHead(200, { "Content-Type": metricsRegistry.contentType, "Cache-Control": "no-store" });
        res.end(req.method === "HEAD" ? undefined : text);
      },
      (err: unknown) => {
        options.logger.warn({ err }, "metrics collection failed");
        res.writeHead(500, { "Content-Type": "text/plain" }).end("metrics collection failed\n");
      },
    );
  });
  // A scrape is one short request; nothing here needs to wait long for a slow client.
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  server.listen(options.port, options.host);
  await once(server, "listening");
  options.logger.info({ metricsPort: (server.address() as AddressInfo).port }, "metrics listening");
  return server;
}
