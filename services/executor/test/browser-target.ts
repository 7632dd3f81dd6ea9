// A small web application the browser step tests drive with real Chromium: real pages over real
// sockets, bound to 127.0.0.2 (what executors reach with EGRESS_ALLOW_CIDRS=127.0.0.2/32, so that
// 127.0.0.1 stays refused).
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { Socket } from "node:net";
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { type Step, StepSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { EgressGuard, EgressPolicy, parseAllowList } from "@testrun/kit/egress";

/** The Chromium the tests drive: Debian's, unless CHROMIUM_PATH says otherwise. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Steps in the file format of docs/runs.md (the proto JSON shape, camelCase). */
export const stepsOf = (steps: object[]): Step[] =>
  // Through JSON text: a field written as undefined is left out, as in a file.
  steps.map((step) => fromJson(StepSchema, JSON.parse(JSON.stringify(step)) as JsonValue));

/** What HTTP steps against this target go through: the guard allowing 127.0.0.2 only. */
export const browserTargetEgress = new EgressGuard(
  new EgressPolicy({ allow: parseAllowList("127.0.0.2/32") }),
);

export interface BrowserTarget {
  url: string;
  /** Requests received so far, as "METHOD /path". */
  hits: string[];
  /** Requests to /gate wait until this is called (a page that holds a test in place). */
  openGate(): void;
  /** Resolves once `count` requests to `path` arrived (counting those before the call). */
  hitsOf(path: string, count: number): Promise<void>;
  close(): Promise<void>;
}

const escapeHtml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");

const page = (title: string, body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

const pages: Record<string, string> = {
  "/": page(
    "Home of the shop",
    `<h1>Welcome</h1><a href="/form">Open the form</a>
     <p data-testid="greeting">Hello, visitor</p>
     <ul><li class="item">Item one</li><li class="item">Item two</li><li class="item">Item three</li></ul>
     <p id="hidden-note" style="display:none">Secret note</p>
     <button disabled>Disabled action</button>
     <div style="position:relative"><button id="covered">Covered</button>
       <div style="position:absolute;inset:0;background:#fff"></div></div>`,
  ),
  "/form": page(
    "Sign in",
    `<form method="post" action="/welcome">
       <label>Email <input name="email" placeholder="you@example.com"></label>
       <label>Password <input name="password" type="password"></label>
       <label>Country <select name="country"><option value="fr">France</option><option value="jp">Japan</option></select></label>
       <label><input type="checkbox" name="remember"> Remember me</label>
       <label><input type="radio" name="plan" value="free" checked> Free</label>
       <label><input type="radio" name="plan" value="pro"> Pro</label>
       <div contenteditable="false" data-testid="static">Not an input</div>
       <button type="submit">Sign in</button>
     </form>`,
  ),
  "/hover": page(
    "Hover",
    `<style>#tip{display:none} #spot:hover + #tip{display:block}</style>
     <span id="spot">Point here</span><span id="tip">Tooltip shown</span>`,
  ),
  "/keys": page(
    "Keys",
    `<input aria-label="Keys field"><p data-testid="last-key">none</p>
     <script>document.querySelector("input").addEventListener("keydown", (e) => {
       document.querySelector("[data-testid=last-key]").textContent = "pressed " + e.key; });</script>`,
  ),
  "/delayed": page(
    "Delayed",
    `<p id="loading">Loading…</p>
     <script>setTimeout(() => { document.querySelector("#loading").remove();
       const p = document.createElement("p"); p.textContent = "Ready now"; document.body.append(p);
       history.pushState({}, "", "/delayed/done?step=2"); }, 300);</script>`,
  ),
  "/noisy": page(
    "Noisy",
    `<p>Noisy page</p><script>console.error("something broke");
       fetch("/status/500").catch(() => {});</script>`,
  ),
  "/echo-form": page(
    "Echo form",
    `<form method="get" action="/echo"><label>Value <input name="value"></label><button>Send</button></form>`,
  ),
  // A page that shows what is typed: a password input, a text input, and a paragraph that echoes the
  // text input inside a longer sentence (the screenshots' masking, browser-masking.test.ts).
  "/typed": page(
    "Typed",
    `<label>Password <input type="password" id="pw"></label>
     <label>Text <input id="text"></label>
     <p id="echo" style="font-size:32px">You typed: <span id="echoed"></span></p>
     <p id="long" style="font-size:32px"></p>
     <script>document.getElementById("text").addEventListener("input", (event) => {
       document.getElementById("echoed").textContent = event.target.value;
       document.getElementById("long").textContent = "Dear user, your code " + event.target.value + " is now active.";
     });</script>`,
  ),
  "/tall": page("Tall", `<div style="height:3000px;background:linear-gradient(#fff,#00f)">Tall page</div>`),
};

/**
 * Routes: the pages above; POST /welcome (the form) answers "Welcome, <email>"; GET /echo?value=V
 * shows V and sends it back to /collect in a fetch (its body in the trace's network log) and a
 * console error; GET /cookie/set sets a cookie; GET /cookie/show shows the Cookie header it got;
 * POST /api/login {user} answers {token}; GET /account?token=T greets the user of a valid token;
 * GET /status/N answers N; GET /hang never answers; GET /gate answers once openGate is called.
 */
export async function startBrowserTarget(): Promise<BrowserTarget> {
  const hits: string[] = [];
  const waiters: { path: string; count: number; resolve: () => void }[] = [];
  const countOf = (path: string) => hits.filter((hit) => hit.endsWith(` ${path}`)).length;
  const sockets = new Set<Socket>();
  let gate = Promise.withResolvers<void>();
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const body = await bodyOf(req);
    // Counted once read, so that a request to /gate is waiting at the gate when a test hears of it.
    hits.push(`${req.method} ${url.pathname}`);
    for (const waiter of [...waiters])
      if (countOf(waiter.path) >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    const html = (status: number, text: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "text/html; charset=utf-8", ...headers });
      res.end(text);
    };
    const known = pages[url.pathname];
    if (req.method === "GET" && known) return html(200, known);
    const status = /^\/status\/(\d{3})$/.exec(url.pathname);
    if (status) {
      res.writeHead(Number(status[1]));
      return res.end();
    }
    switch (`${req.method} ${url.pathname}`) {
      case "POST /welcome": {
        const email = new URLSearchParams(body).get("email") ?? "";
        return html(200, page("Welcome", `<p data-testid="greeting">Welcome, ${escapeHtml(email)}</p>`));
      }
      case "GET /echo": {
        const value = url.searchParams.get("value") ?? "";
        return html(
          200,
          page(
            "Echo",
            `<p data-testid="echo">You typed: ${escapeHtml(value)}</p>
             <script>const typed = ${JSON.stringify(value).replaceAll("<", "\\u003c")};
               console.error("typed " + typed);
               Promise.all([
                 fetch("/collect", { method: "POST", body: JSON.stringify({ typed }) }).then((r) => r.text()),
                 fetch("/blob?value=" + encodeURIComponent(typed)).then((r) => r.arrayBuffer()),
               ]).then(() => document.body.append("Sent back"));</script>`,
          ),
        );
      }
      case "GET /blob": {
        // Binary (not UTF-8) with the value's bytes inside.
        const value = Buffer.from(url.searchParams.get("value") ?? "", "utf8");
        res.writeHead(200, { "content-type": "application/octet-stream" });
        return res.end(Buffer.concat([Buffer.from([0, 0xff, 0xfe, 1]), value, Buffer.from([0xc0, 0])]));
      }
      case "POST /collect":
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ received: body }));
      case "GET /cookie/set":
        return html(200, page("Cookie set", "<p>cookie set</p>"), { "set-cookie": "seen=A; Path=/" });
      case "GET /cookie/show":
        return html(
          200,
          page("Cookie", `<p data-testid="cookie">cookie: ${escapeHtml(req.headers.cookie ?? "none")}</p>`),
        );
      case "POST /api/login": {
        const { user } = JSON.parse(body || "{}") as { user?: string };
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ token: `tok-${user}-7f3a9c` }));
      }
      case "GET /account": {
        const token = url.searchParams.get("token") ?? "";
        const user = /^tok-(\w+)-7f3a9c$/.exec(token)?.[1];
        return html(
          user ? 200 : 401,
          page("Account", `<h1>${user ? `Account of ${escapeHtml(user)}` : "Please sign in"}</h1>`),
        );
      }
      case "GET /hang":
        return;
      case "GET /gate":
        await gate.promise;
        return html(200, page("Gate", "<p>through the gate</p>"));
    }
    html(404, page("Not found", "<h1>Not found</h1>"));
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.listen(0, "127.0.0.2");
  await once(server, "listening");
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.2:${port}`,
    hits,
    hitsOf(path, count) {
      if (countOf(path) >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ path, count, resolve }));
    },
    openGate() {
      gate.resolve();
      gate = Promise.withResolvers<void>();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, "close");
    },
  };
}

/**
 * SIGKILLs this process's browser (the chromium process whose parent is this process) and returns
 * its pid; throws when there is none. Never signals anything else: a missing pid must not become
 * `kill(0)`, which would end this process's whole group (mocha, make and CI's shell with it).
 */
export async function killBrowser(): Promise<number> {
  const { readdir, readFile } = await import("node:fs/promises");
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // pid (comm) state ppid …: comm may hold spaces, so read after its closing parenthesis.
    const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    const pid = Number(entry);
    if (ppid === process.pid && comm.startsWith("chromium") && pid > 1) {
      process.kill(pid, "SIGKILL");
      return pid;
    }
  }
  throw new Error("no browser process to kill: this process has no chromium child");
}
