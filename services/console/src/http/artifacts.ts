import { type Client, Code, ConnectError } from "@connectrpc/connect";
import type Router from "@koa/router";
import type { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { Logger } from "@testrun/kit";
import { actorOf, type Viewers } from "../viewer.js";
import type { ConsoleCookies } from "./cookies.js";

export interface ArtifactDeps {
  viewers: Viewers;
  runs: Client<typeof RunsService>;
  cookies: ConsoleCookies;
  logger: Logger;
}

/**
 * An artifact's bytes are never run as a page of the console's origin: no script, style or
 * frame of its own, a sandbox (a unique origin) should a browser ever render one as a document.
 */
export const artifactPolicy = "default-src 'none'; frame-ancestors 'none'; sandbox";

/** What each stored content type is served as, and whether the browser shows it or saves it. */
const servedAs: Record<string, { type: string; extension: string; disposition: "inline" | "attachment" }> = {
  "image/png": { type: "image/png", extension: ".png", disposition: "inline" },
  "application/json": { type: "application/json; charset=utf-8", extension: ".json", disposition: "inline" },
  "application/zip": { type: "application/zip", extension: ".zip", disposition: "attachment" },
};
const otherwise = { type: "application/octet-stream", extension: "", disposition: "attachment" } as const;

/** Artifact ids (`art_…`) are short words; anything else is no artifact, asked of no one. */
const artifactIdPattern = /^[A-Za-z0-9_-]{1,100}$/;

/** A file name for Content-Disposition: the artifact's name with only safe characters. */
const fileName = (name: string, extension: string) =>
  `${name.replace(/[^A-Za-z0-9 ._-]/g, "_").slice(0, 100) || "artifact"}${extension}`;

/**
 * GET /artifacts/:artifactId: a screenshot, trace or browser log of a test, for the signed-in
 * member (the session cookie; a GET changes nothing, so the same-origin rule for writes has
 * nothing to refuse). RunsService.GetArtifact decides, with the member as actor: for a person who
 * is a member of several organizations each of their members is asked until one may read it.
 * 401 without a live session, 404 for an artifact unknown, expired or of a project the person
 * cannot see (indistinguishable), 502 when the runs service cannot answer. The bytes are the
 * member's: never cached (`no-store`), never sniffed, never run (artifactPolicy).
 */
export function artifactRoutes(router: Router, deps: ArtifactDeps): void {
  const { viewers, runs, cookies, logger } = deps;
  router.get("/artifacts/:artifactId", async (ctx) => {
    ctx.set("Cache-Control", "no-store");
    ctx.set("Content-Security-Policy", artifactPolicy);
    const fail = (status: number, message: string) => {
      ctx.status = status;
      ctx.type = "text/plain; charset=utf-8";
      ctx.body = `${message}\n`;
    };
    let viewer: Awaited<ReturnType<Viewers["ofSession"]>>;
    try {
      viewer = await viewers.ofSession(cookies.read(ctx.get("Cookie"), cookies.sessionName));
    } catch (error) {
      if (ConnectError.from(error).code !== Code.Unauthenticated) throw error;
      return fail(401, "Sign in to the console to see this artifact.");
    }
    const { artifactId } = ctx.params;
    if (!artifactId || !artifactIdPattern.test(artifactId)) return fail(404, "Artifact not found.");
    for (const membership of viewer.memberships) {
      try {
        const { artifact, content } = await runs.getArtifact({ actor: actorOf(membership), artifactId });
        const served = servedAs[artifact?.contentType ?? ""] ?? otherwise;
        ctx.type = served.type;
        ctx.set(
          "Content-Disposition",
          `${served.disposition}; filename="${fileName(artifact?.name ?? "", served.extension)}"`,
        );
        ctx.body = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
        return;
      } catch (error) {
        const code = ConnectError.from(error).code;
        // Another organization's member: the next one may read it.
        if (code === Code.NotFound || code === Code.PermissionDenied) continue;
        if (code === Code.InvalidArgument) return fail(404, "Artifact not found.");
        logger.warn({ err: error, artifactId }, "reading an artifact failed");
        return fail(502, "The artifact cannot be read now; try again in a moment.");
      }
    }
    fail(404, "Artifact not found.");
  });
}
