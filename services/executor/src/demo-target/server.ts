// The demo target application of `make run`: the smallest app the seeded demo test cases can
// really pass and fail against: a JSON API for the HTTP test cases, and a small web app (web.ts)
// for the browser ones. Not part of the product.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { BoundedTokens, createWebApp, maxSessions, same } from "./web.js";

export interface DemoTargetOptions {
  user: string;
  password: string;
  /** What the web app's sign-in form takes as Email (default: `<user>@demo.example`). */
  email?: string;
}

const maxBody = 64 * 1024;
/** The longest /slow answers wait. */
const maxSlowMs = 60_000;

/** Creates (does not start) the demo target's HTTP server. */
export function createDemoTarget(options: DemoTargetOptions): Server {
  // Tokens handed out by /api/login, valid until the process ends (the newest maxSessions).
  const tokens = new BoundedTokens(maxSessions);
  const web = createWebApp({
    user: options.user,
    password: options.password,
    email: options.email ?? `${options.user}@demo.example`,
  });

  const send = (res: ServerResponse, status: number, body: unknown) => {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    res.writeHead(status, {
      "content-type": typeof body === "string" ? "text/plain; charset=utf-8" : "application/json",
    });
    res.end(text);
  };

  const login = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readJson(req);
    if (body === undefined) return send(res, 400, { ok: false, error: "expected a JSON body" });
    const { user, password } = body as { user?: unknown; password?: unknown };
    if (!same(user, options.user) || !same(password, options.password)) {
      return send(res, 401, { ok: false, error: "wrong user or password" });
    }
    const token = tokens.issue();
    send(res, 200, { ok: true, token, message: `welcome, ${options.user}` });
  };

  const profile = (req: IncomingMessage, res: ServerResponse) => {
    const token = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
    if (!tokens.has(token)) return send(res, 401, { ok: false, error: "log in first" });
    send(res, 200, { ok: true, user: options.user });
  };

  /** Answers after `?ms=` milliseconds (default 1000): a page slow enough to catch a test in flight. */
  const slow = (url: URL, res: ServerResponse) => {
    const ms = Math.min(Number(url.searchParams.get("ms") ?? 1_000) || 0, maxSlowMs);
    const timer = setTimeout(() => send(res, 200, "ok"), Math.max(ms, 0));
    res.once("close", () => clearTimeout(timer));
  };

  return createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const route = `${req.method} ${url.pathname}`;
    if (route === "GET /health") return send(res, 200, "ok");
    if (route === "GET /slow") return slow(url, res);
    if (route === "POST /api/login") {
      return void login(req, res).catch(() => send(res, 500, { ok: false, error: "internal error" }));
    }
    if (route === "GET /api/profile") return profile(req, res);
    if (web(route, req, res)) return;
    send(res, 404, { ok: false, error: "not found" });
  });
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBody) return undefined;
    chunks.push(chunk);
  }
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    return value !== null && typeof value === "object" ? value : undefined;
  } catch {
    return undefined;
  }
}
