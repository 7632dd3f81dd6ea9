import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import type { Middleware } from "koa";
import send from "koa-send";

/**
 * The Playwright trace viewer, served by the console itself (docs/console.md, "Traces"): the
 * static build playwright-core ships, opened as `/trace-viewer/index.html?trace=/artifacts/{id}`.
 * Its service worker (sw.bundle.js, scope /trace-viewer/) fetches the trace with the member's
 * session cookie (same origin), unzips it and serves the viewer's snapshots to its frames.
 */
export const traceViewerPrefix = "/trace-viewer/";

/** playwright-core's build of the viewer: index.html, sw.bundle.js, assets/, fonts. */
export function traceViewerRoot(): string {
  const playwrightCore = dirname(createRequire(import.meta.url).resolve("playwright-core/package.json"));
  return join(playwrightCore, "lib", "vite", "traceViewer");
}

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

/** The files of the viewer with these extensions, its assets/ folder included. */
function viewerFiles(root: string, extension: string): string[] {
  return readdirSync(root, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(extension))
    .map((name) => readFileSync(join(root, name), "utf8"));
}

/**
 * The viewer's content security policy: what it needs and nothing more. Against the console's own
 * (security.ts), it adds
 * - the hashes of the viewer's own inline scripts and styles: a script of index.html (a notice for
 *   pages opened from file:), the style attribute of snapshot.html (a snapshot in a tab of its
 *   own) and the style of the blank page its snapshot frames show before a snapshot (a data: URL,
 *   which takes this policy); `'unsafe-hashes'` lets a hash allow a style attribute, no other,
 * - `worker-src 'self'` for its service worker, and `frame-src 'self' data:` for the snapshot
 *   frames (the worker serves their documents with a policy of its own: scripts by nonce only),
 * - `img-src blob:` for images it makes from the trace's contents.
 * `connect-src 'self'` holds for the service worker too (this header comes with sw.bundle.js):
 * the viewer cannot fetch a trace, or anything else, from another origin.
 */
export function traceViewerPolicy(root: string): string {
  const html = viewerFiles(root, ".html");
  const scripts = html.flatMap((page) =>
    [...page.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map(([, body]) => body ?? ""),
  );
  const styleAttributes = html.flatMap((page) =>
    [...page.matchAll(/\sstyle="([^"]*)"/g)].map(([, value]) => value ?? ""),
  );
  const styleElements = [...html, ...viewerFiles(root, ".js")].flatMap((text) =>
    [...text.matchAll(/<style>([^<`]*)<\/style>/g)].map(([, body]) => body ?? ""),
  );
  const styleHashes = [...new Set([...styleAttributes, ...styleElements])].map(sha256);
  const unsafeHashes = styleAttributes.length > 0 ? ["'unsafe-hashes'"] : [];
  return [
    "default-src 'none'",
    ["script-src 'self'", ...new Set(scripts.map(sha256))].join(" "),
    ["style-src 'self'", ...unsafeHashes, ...styleHashes].join(" "),
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "worker-src 'self'",
    "frame-src 'self' data:",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/**
 * Serves the viewer's files under /trace-viewer/ with the viewer's policy; any other path under it
 * is 404 (never the console's app). Files are revalidated on each use (Last-Modified): the
 * viewer's names do not all change when playwright-core is upgraded.
 */
/**
 * Put before the viewer's own service worker, whose first listener answers first. That worker
 * answers `/trace-viewer/file/<sha1>` with a resource captured in the trace, in its captured content
 * type and with no policy: a page under test that links to its own HTML resource would have it
 * open as a page of the console's origin, with the member's session. A trace's files are fetched
 * by the viewer, never opened as pages (downloads carry `dn`): such a navigation is refused.
 */
export const workerGuard = `self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.mode !== "navigate" || !url.pathname.startsWith("${traceViewerPrefix}file")) return;
  if (url.searchParams.has("dn")) return;
  event.stopImmediatePropagation();
  event.respondWith(new Response("A trace's files do not open as pages.", { status: 403, headers: { "content-type": "text/plain" } }));
});
`;

export function traceViewer(root: string): Middleware {
  const policy = traceViewerPolicy(root);
  let guardedWorker: string | undefined;
  return async (ctx, next) => {
    if (ctx.path === traceViewerPrefix.slice(0, -1)) {
      ctx.redirect(traceViewerPrefix);
      return;
    }
    if (!ctx.path.startsWith(traceViewerPrefix)) return next();
    if (ctx.method !== "GET" && ctx.method !== "HEAD") {
      ctx.status = 405;
      ctx.set("Allow", "GET, HEAD");
      return;
    }
    const file = ctx.path.slice(traceViewerPrefix.length) || "index.html";
    try {
      await send(ctx, file, { root, index: "index.html", hidden: false });
    } catch (error) {
      const status = (error as { status?: number }).status;
      if (status !== 404 && status !== 400 && status !== 403) throw error;
    }
    if (!ctx.body) {
      ctx.status = 404;
      ctx.type = "text/plain";
      ctx.body = "Not found\n";
      return;
    }
    ctx.set("Content-Security-Policy", policy);
    ctx.set("Cache-Control", "no-cache");
    if (ctx.fresh) {
      // Not modified: the file's stream, opened by send, is closed unread.
      if (ctx.body instanceof Readable) ctx.body.destroy();
      ctx.status = 304;
      ctx.body = null;
    } else if (file === "sw.bundle.js") {
      if (ctx.body instanceof Readable) ctx.body.destroy();
      guardedWorker ??= workerGuard + readFileSync(join(root, file), "utf8");
      ctx.body = guardedWorker;
      ctx.type = "text/javascript";
    }
  };
}
