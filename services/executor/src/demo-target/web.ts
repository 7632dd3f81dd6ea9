// The demo target's small web application, for the demo project's browser test cases
// (scripts/demo/browser-test-cases.yaml): a sign-in page, an order form behind it, and a reports
// page whose button fails on purpose. Plain HTML, forms that work without script, accessible names
// (labels, roles) and test ids for locators; the one script is a file of its own (/app.js), so the
// pages' Content-Security-Policy allows no inline script. Not part of the product.
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

export interface WebAppOptions {
  /** The account's name, greeted after sign-in. */
  user: string;
  /** What the sign-in form takes in its Email field. */
  email: string;
  password: string;
}

/** The most sessions kept: the oldest is forgotten past it (a demo's memory stays bounded). */
export const maxSessions = 10_000;
const maxFormBytes = 16 * 1024;
const sessionCookie = "demo_session";
export const plans = ["Starter", "Team", "Enterprise"] as const;

const contentSecurityPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c,
  );

/** Constant-time comparison, as a real sign-in would do. */
export function same(given: unknown, expected: string): boolean {
  if (typeof given !== "string") return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A set of tokens that forgets its oldest past `limit`. */
export class BoundedTokens {
  readonly #tokens = new Set<string>();
  constructor(private readonly limit: number) {}
  issue(): string {
    const token = randomBytes(24).toString("base64url");
    this.#tokens.add(token);
    if (this.#tokens.size > this.limit) this.#tokens.delete(this.#tokens.values().next().value as string);
    return token;
  }
  has(token: string | undefined): boolean {
    return token !== undefined && this.#tokens.has(token);
  }
  delete(token: string | undefined): void {
    if (token !== undefined) this.#tokens.delete(token);
  }
}

function page(res: ServerResponse, status: number, title: string, body: string, headers = {}): void {
  res.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": contentSecurityPolicy,
    "cache-control": "no-store",
    ...headers,
  });
  res.end(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Demo shop</title>
<link rel="stylesheet" href="/style.css">
<script src="/app.js" defer></script>
</head>
<body>
<header><a href="/" class="brand">Demo shop</a><nav aria-label="Main"><a href="/order">Order</a> <a href="/reports">Reports</a></nav></header>
<main>
${body}
</main>
</body>
</html>
`);
}

/** A labelled field, its error (if any) described by it. */
function field(
  label: string,
  name: string,
  control: (attributes: string) => string,
  error: string | undefined,
): string {
  const errorId = `${name}-error`;
  const attributes = `id="${name}" name="${name}" data-testid="${name}"${error ? ` aria-invalid="true" aria-describedby="${errorId}"` : ""}`;
  return `<div class="field"><label for="${name}">${escapeHtml(label)}</label>${control(attributes)}${
    error ? `<p class="error" id="${errorId}">${escapeHtml(error)}</p>` : ""
  }</div>`;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  if (!(req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded")) return undefined;
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxFormBytes) return undefined;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

const cookieOf = (req: IncomingMessage, name: string) =>
  (req.headers.cookie ?? "")
    .split(";")
    .map((part) => part.trim().split("="))
    .find(([key]) => key === name)?.[1];

const redirect = (res: ServerResponse, location: string, headers = {}) => {
  res.writeHead(303, { location, ...headers });
  res.end();
};

/** The web app's routes; answers false for a path it does not serve. */
export function createWebApp(options: WebAppOptions) {
  const sessions = new BoundedTokens(maxSessions);
  let orders = 1000;
  const signedIn = (req: IncomingMessage) => sessions.has(cookieOf(req, sessionCookie));

  const signInPage = (res: ServerResponse, status: number, email = "", failed = false) =>
    page(
      res,
      status,
      "Sign in",
      `<h1>Sign in</h1>
${failed ? '<p role="alert" class="alert">Wrong email or password.</p>' : ""}
<form method="post" action="/login" class="card">
${field("Email", "email", (a) => `<input ${a} type="email" autocomplete="username" required value="${escapeHtml(email)}">`, undefined)}
${field("Password", "password", (a) => `<input ${a} type="password" autocomplete="current-password" required>`, undefined)}
<button type="submit">Sign in</button>
</form>`,
    );

  const orderPage = (
    res: ServerResponse,
    status: number,
    values: Record<string, string> = {},
    errors: Record<string, string> = {},
  ) =>
    page(
      res,
      status,
      "Order",
      `<h1>Place an order</h1>
<form method="post" action="/order" class="card" novalidate>
${field("Full name", "name", (a) => `<input ${a} type="text" autocomplete="name" maxlength="100" value="${escapeHtml(values.name ?? "")}">`, errors.name)}
${field("Quantity", "quantity", (a) => `<input ${a} type="number" min="1" max="10" value="${escapeHtml(values.quantity ?? "1")}">`, errors.quantity)}
${field(
  "Plan",
  "plan",
  (a) =>
    `<select ${a}>${plans
      .map((plan) => `<option${values.plan === plan ? " selected" : ""}>${plan}</option>`)
      .join("")}</select>`,
  errors.plan,
)}
<div class="field check"><input id="newsletter" name="newsletter" type="checkbox" data-testid="newsletter"${values.newsletter ? " checked" : ""}><label for="newsletter">Send me the newsletter</label></div>
${field("Notes", "notes", (a) => `<textarea ${a} rows="3" maxlength="500">${escapeHtml(values.notes ?? "")}</textarea>`, undefined)}
<button type="submit">Place order</button>
</form>`,
    );

  const placeOrder = async (req: IncomingMessage, res: ServerResponse) => {
    const form = await readForm(req);
    if (!form) return orderPage(res, 400, {}, { name: "Send the form as a form." });
    const values = Object.fromEntries(form);
    const errors: Record<string, string> = {};
    const name = (values.name ?? "").trim();
    const quantity = Number(values.quantity);
    if (!name || name.length > 100) errors.name = "Enter your full name (at most 100 characters).";
    if (!Number.isInteger(quantity) || quantity < 1 || quantity > 10)
      errors.quantity = "Enter a quantity from 1 to 10.";
    if (!plans.includes(values.plan as (typeof plans)[number])) errors.plan = "Choose a plan.";
    if (Object.keys(errors).length > 0) return orderPage(res, 400, values, errors);
    orders += 1;
    page(
      res,
      200,
      "Order placed",
      `<h1>Thank you</h1>
<p role="status" data-testid="order-result" class="card">Order ${orders} placed: ${quantity} × ${escapeHtml(values.plan ?? "")} for ${escapeHtml(name)}.${
        values.newsletter ? " You will get the newsletter." : ""
      }</p>
<p><a href="/order">Place another order</a></p>`,
    );
  };

  const signIn = async (req: IncomingMessage, res: ServerResponse) => {
    const form = await readForm(req);
    const email = form?.get("email") ?? "";
    if (!same(email, options.email) || !same(form?.get("password"), options.password))
      return signInPage(res, 401, email, true);
    const token = sessions.issue();
    redirect(res, "/account", {
      "set-cookie": `${sessionCookie}=${token}; Path=/; HttpOnly; SameSite=Lax`,
    });
  };

  /** Serves `route` ("GET /login", …); false when the web app has no such page. */
  return (route: string, req: IncomingMessage, res: ServerResponse): boolean => {
    const fail = () => page(res, 500, "Error", "<h1>Something went wrong</h1>");
    switch (route) {
      case "GET /":
        page(
          res,
          200,
          "Home",
          `<h1>Demo shop</h1>
<p>The web application the demo project's browser tests run against.</p>
<ul><li><a href="/login">Sign in</a></li><li><a href="/order">Place an order</a> (after signing in)</li><li><a href="/reports">Reports</a> (fails on purpose)</li></ul>`,
        );
        return true;
      case "GET /login":
        signInPage(res, 200);
        return true;
      case "POST /login":
        void signIn(req, res).catch(fail);
        return true;
      case "POST /logout":
        sessions.delete(cookieOf(req, sessionCookie));
        redirect(res, "/login", {
          "set-cookie": `${sessionCookie}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`,
        });
        return true;
      case "GET /account":
        if (!signedIn(req)) redirect(res, "/login");
        else
          page(
            res,
            200,
            "Account",
            `<h1 data-testid="greeting">Hello, ${escapeHtml(options.user)}</h1>
<p>You are signed in as ${escapeHtml(options.email)}.</p>
<p><a href="/order">Place an order</a></p>
<form method="post" action="/logout"><button type="submit" class="secondary">Sign out</button></form>`,
          );
        return true;
      case "GET /order":
        if (!signedIn(req)) redirect(res, "/login");
        else orderPage(res, 200);
        return true;
      case "POST /order":
        if (!signedIn(req)) redirect(res, "/login");
        else void placeOrder(req, res).catch(fail);
        return true;
      case "GET /reports":
        page(
          res,
          200,
          "Reports",
          `<h1>Reports</h1>
<p>The monthly report is built on demand.</p>
<button type="button" id="load-report" data-testid="load-report">Load report</button>
<p data-testid="report-status" aria-live="polite"></p>`,
        );
        return true;
      case "GET /api/report":
        // The failure the demo's failing browser test meets: the report never loads.
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ ok: false, error: "the report service is down" }));
        return true;
      case "GET /app.js":
        res.writeHead(200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-cache" });
        res.end(appScript);
        return true;
      case "GET /style.css":
        res.writeHead(200, { "content-type": "text/css; charset=utf-8", "cache-control": "no-cache" });
        res.end(styles);
        return true;
      default:
        return false;
    }
  };
}

/** The pages' one script: the reports page's button (the report fails to load, on purpose). */
const appScript = `"use strict";
const button = document.getElementById("load-report");
if (button) {
  button.addEventListener("click", async () => {
    const status = document.querySelector('[data-testid="report-status"]');
    status.textContent = "Loading…";
    const response = await fetch("/api/report");
    if (response.ok) {
      status.textContent = "Report ready";
      return;
    }
    status.textContent = "";
    const alert = document.createElement("p");
    alert.setAttribute("role", "alert");
    alert.className = "alert";
    alert.textContent = "Could not load the report: the server answered " + response.status + ".";
    status.after(alert);
  });
}
`;

const styles = `*{box-sizing:border-box}
body{margin:0;font:16px/1.5 "Liberation Sans",Arial,sans-serif;color:#1f2328;background:#f6f8fa}
header{display:flex;gap:1.5rem;align-items:center;padding:.75rem 1.5rem;background:#24292f}
header a{color:#fff;text-decoration:none}
.brand{font-weight:700}
nav{display:flex;gap:1rem}
main{max-width:32rem;margin:2rem auto;padding:0 1rem}
h1{font-size:1.6rem;margin:0 0 1rem}
.card{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:1.25rem}
.field{display:flex;flex-direction:column;gap:.25rem;margin-bottom:1rem}
.field.check{flex-direction:row;align-items:center;gap:.5rem}
input,select,textarea{font:inherit;padding:.45rem .6rem;border:1px solid #8c959f;border-radius:6px}
[aria-invalid=true]{border-color:#cf222e}
.error{color:#cf222e;margin:0;font-size:.9rem}
button{font:inherit;padding:.5rem 1rem;border:0;border-radius:6px;background:#1f883d;color:#fff;cursor:pointer}
button.secondary{background:#6e7781}
.alert{background:#ffebe9;border:1px solid #cf222e;border-radius:6px;padding:.75rem;color:#82071e}
[role=status]{font-weight:600}
`;
