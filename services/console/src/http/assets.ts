import { existsSync } from "node:fs";
import { join } from "node:path";
import type Koa from "koa";
import send from "koa-send";
import serve from "koa-static";

/**
 * The built web app (services/console/web-build, from `make web`): hashed files under /assets are
 * cached for good; every other GET that is not a file gets index.html, so a deep link such as a
 * run's url opens the app, which then routes it.
 */
export function webApp(root: string): Koa.Middleware[] {
  const index = join(root, "index.html");
  if (!existsSync(index)) {
    return [
      async (ctx) => {
        ctx.status = 503;
        ctx.type = "text/plain";
        ctx.body = "The console's web app is not built: run `make web` (or `make run`).\n";
      },
    ];
  }
  return [
    serve(root, {
      index: false,
      setHeaders: (res, path) => {
        res.setHeader(
          "Cache-Control",
          path.includes(`${join(root, "assets")}/`) ? "public, max-age=31536000, immutable" : "no-cache",
        );
      },
    }),
    async (ctx, next) => {
      if (ctx.method !== "GET" && ctx.method !== "HEAD") return next();
      ctx.set("Cache-Control", "no-cache");
      await send(ctx, "index.html", { root });
    },
  ];
}
