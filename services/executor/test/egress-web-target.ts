// A small web site for the browser egress tests, served the same on an allowed address (127.0.0.2)
// and a refused one (127.0.0.1): whatever a page could get from the allowed one it would get from
// the refused one too, were the guard to let it through. Each counts the connections it accepts.
import { createHash } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface WebTarget {
  /** `http://<host>:<port>`. */
  url: string;
  host: string;
  port: number;
  /** TCP connections accepted so far (HTTP and WebSocket alike). */
  readonly connections: number;
  /** Requests received so far, as "METHOD /path?query". */
  requests: string[];
  /** Headers of the last request to /headers. */
  readonly lastHeaders?: IncomingMessage["headers"];
  /** HTML pages served at `/page/<name>`. */
  pages: Map<string, string>;
  /** Connections open now. */
  readonly open: number;
  close(): Promise<void>;
}

const onePixelPng = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

/** The answer to a WebSocket handshake (RFC 6455, 4.2.2). */
const acceptKey = (key: string) =>
  createHash("sha1").update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64");

/** One unmasked text frame from server to client (payload under 126 bytes). */
const textFrame = (text: string) =>
  Buffer.concat([Buffer.from([0x81, Buffer.byteLength(text)]), Buffer.from(text)]);

/**
 * Routes, every answer readable from any origin (`access-control-allow-origin: *`), so that a page
 * reads whatever reaches it:
 * - GET /page/<name>: the HTML in `pages`; GET /: `<h1>page on <host></h1>`
 * - GET /secret: text "secret of <host>"
 * - GET /pixel.png: a 1×1 PNG; GET /leak.js: sets `window.leaked`; GET /leak.css: a red body
 * - GET /redirect?to=URL: 302 to URL
 * - GET /headers: the request's headers as JSON
 * - GET /download: an attachment (report.txt); GET /hang: never answers
 * - a WebSocket handshake on any path: accepted, then the text "hello from <host>"
 */
export async function startWebTarget(host: string): Promise<WebTarget> {
  const requests: string[] = [];
  const pages = new Map<string, string>();
  const sockets = new Set<Socket>();
  let connections = 0;
  let lastHeaders: IncomingMessage["headers"] | undefined;
  // Headers up to 64 KiB: more than the egress proxy passes, so the proxy's bound is what is tested.
  const server: Server = createServer({ maxHeaderSize: 64 * 1024 }, (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const url = new URL(req.url ?? "/", "http://target");
    const send = (
      status: number,
      type: string,
      body: string | Buffer,
      headers: Record<string, string> = {},
    ) => {
      res.writeHead(status, { "content-type": type, "access-control-allow-origin": "*", ...headers });
      res.end(body);
    };
    const page = /^\/page\/(.+)$/.exec(url.pathname);
    if (page) return send(200, "text/html", pages.get(page[1] ?? "") ?? "<p>no such page</p>");
    switch (url.pathname) {
      case "/":
        return send(200, "text/html", `<title>${host}</title><h1>page on ${host}</h1>`);
      case "/secret":
        return send(200, "text/plain", `secret of ${host}`);
      case "/pixel.png":
        return send(200, "image/png", onePixelPng);
      case "/leak.js":
        return send(200, "text/javascript", `window.leaked = ${JSON.stringify(host)};`);
      case "/leak.css":
        return send(200, "text/css", "body { background-color: rgb(255, 0, 0); }");
      case "/redirect":
        return send(302, "text/plain", "", { location: url.searchParams.get("to") ?? "/" });
      case "/headers":
        lastHeaders = req.headers;
        return send(200, "application/json", JSON.stringify(req.headers));
      case "/hang":
        return;
      case "/download":
        return send(200, "application/octet-stream", "the downloaded file", {
          "content-disposition": 'attachment; filename="report.txt"',
        });
      default:
        return send(404, "text/plain", "not found");
    }
  });
  server.on("upgrade", (req: IncomingMessage, socket: Socket) => {
    requests.push(`UPGRADE ${req.url}`);
    socket.write(
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        `Sec-WebSocket-Accept: ${acceptKey(String(req.headers["sec-websocket-key"]))}\r\n\r\n`,
    );
    socket.write(textFrame(`hello from ${host}`));
    socket.on("error", () => {});
  });
  server.on("connection", (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.listen(0, host);
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    host,
    port,
    get connections() {
      return connections;
    },
    requests,
    get lastHeaders() {
      return lastHeaders;
    },
    pages,
    get open() {
      return sockets.size;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, "close");
    },
  };
}
