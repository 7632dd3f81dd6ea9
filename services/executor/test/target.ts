// A small HTTP server the step runner's tests run against: real requests, real sockets.
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { Socket } from "node:net";
import { EgressGuard, EgressPolicy, parseAllowList } from "@testrun/kit/egress";
import { localTargetsEgress } from "../../../scripts/system.js";

/**
 * What steps against these targets (on 127.0.0.1) go through: the egress guard with loopback
 * allowed, as every executor started locally has it (scripts/system.ts).
 */
export const localEgress = new EgressGuard(
  new EgressPolicy({ allow: parseAllowList(localTargetsEgress.EGRESS_ALLOW_CIDRS) }),
);

export interface TestTarget {
  url: string;
  /** Requests received so far, as "METHOD /path". */
  hits: string[];
  close(): Promise<void>;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Routes:
 * - GET /text: 200 text/plain "hello, welcome"
 * - GET /json: 200 {"ok":true,"count":2,"items":[{"id":7,"tags":["a"]}],"odd key":"x","user":null}
 * - ANY /echo: 200 JSON of {method, path, query, headers, body, json (the body parsed, if JSON)}
 * - POST /login: {user,password} equal to "alice"/"s3cret" gives {ok:true, token:"tok-1"}, else 401
 * - GET /me: 200 {name:"alice"} with "Authorization: Bearer tok-1", else 401
 * - GET /status/N: status N, empty body
 * - GET /header?value=V: 200 with header x-echo: V
 * - GET /slow?ms=N: answers after N ms
 * - GET /hang: never answers
 * - GET /redirect: 302 to /text
 */
export async function startTestTarget(): Promise<TestTarget> {
  const hits: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    hits.push(`${req.method} ${url.pathname}`);
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
      res.end(JSON.stringify(value));
    };
    const text = await body(req);
    const status = /^\/status\/(\d{3})$/.exec(url.pathname);
    if (status) {
      res.writeHead(Number(status[1]));
      return res.end();
    }
    switch (`${req.method} ${url.pathname}`) {
      case "GET /text":
        res.writeHead(200, { "content-type": "text/plain" });
        return res.end("hello, welcome");
      case "GET /json":
        return json(200, { ok: true, count: 2, items: [{ id: 7, tags: ["a"] }], "odd key": "x", user: null });
      case "GET /me":
        if (req.headers.authorization === "Bearer tok-1") return json(200, { name: "alice" });
        return json(401, { error: "log in first" });
      case "POST /login": {
        const { user, password } = JSON.parse(text || "{}");
        if (user === "alice" && password === "s3cret") return json(200, { ok: true, token: "tok-1" });
        return json(401, { ok: false });
      }
      case "GET /header":
        res.writeHead(200, { "x-echo": url.searchParams.get("value") ?? "" });
        return res.end();
      case "GET /slow":
        setTimeout(() => json(200, { ok: true }), Number(url.searchParams.get("ms")));
        return;
      case "GET /hang":
        return;
      case "GET /redirect":
        res.writeHead(302, { location: "/text" });
        return res.end();
    }
    if (url.pathname === "/echo") {
      return json(200, {
        method: req.method,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body: text,
        json: parseJson(text),
      });
    }
    json(404, { error: "not found" });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, "close");
    },
  };
}
