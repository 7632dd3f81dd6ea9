import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
import { ArtifactKind } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { callerIdentity, isIdOf, requireActor } from "@testrun/kit";
import { artifactKey } from "../artifacts/contents.js";
import { sweepBatch } from "../artifacts/sweeper.js";
import type { ArtifactKind as StoredArtifactKind } from "../db/entities.js";
import type { ServiceDeps } from "../deps.js";
import { artifactNotFound, invalid, putArtifactRefusals, refusal } from "../errors.js";
import { renderArtifact } from "../render.js";
import type { Handlers } from "./context.js";
import { requireExecutor } from "./executors.js";

/** Each kind's one content type (runs.proto, Artifact.content_type). */
const kinds: Partial<Record<ArtifactKind, { stored: StoredArtifactKind; contentType: string }>> = {
  [ArtifactKind.SCREENSHOT]: { stored: "screenshot", contentType: "image/png" },
  [ArtifactKind.TRACE]: { stored: "trace", contentType: "application/zip" },
  [ArtifactKind.BROWSER_LOG]: { stored: "browser_log", contentType: "application/json" },
  [ArtifactKind.HTTP_RESPONSE]: { stored: "http_response", contentType: "application/json" },
};

const maxNameLength = 100;

/**
 * Whether the actor may read artifacts of the project, as for its other reads: a key only in its
 * own project (its creator's rights checked, as for every read: a key that lost them is told so),
 * a member who can see the project, an operator while the project exists. Any other refusal is
 * NOT_FOUND, like an unknown artifact, so that nobody learns what exists elsewhere.
 */
async function mayRead({ access }: ServiceDeps, actor: Actor, projectId: string): Promise<void> {
  if (actor.kind.case === "apiKey" && actor.kind.value.projectId !== projectId) throw artifactNotFound();
  try {
    await access.require(actor, projectId, Permission.READ);
  } catch (error) {
    const code = ConnectError.from(error).code;
    if (actor.kind.case === "apiKey" && code === Code.PermissionDenied) throw error;
    if (code === Code.NotFound || code === Code.PermissionDenied) throw artifactNotFound();
    throw error;
  }
}

/** PutArtifact, GetArtifact, PurgeProjectArtifacts: the artifacts of tests (docs/runs.md, "Artifacts"). */
export function artifactHandlers(deps: ServiceDeps): Handlers {
  const { artifacts, contents, sweeper, artifactMaxBytes, logger } = deps;
  return {
    async putArtifact(req, ctx) {
      requireExecutor(ctx);
      const kind = kinds[req.kind];
      if (!kind) throw invalid("kind must be SCREENSHOT, TRACE, BROWSER_LOG or HTTP_RESPONSE");
      const nameLength = [...req.name].length;
      if (nameLength < 1 || nameLength > maxNameLength)
        throw invalid(`name must be 1 to ${maxNameLength} characters`);
      if (/[\p{Cc}\u2028\u2029]/u.test(req.name)) throw invalid("name must be one line of text");
      if (req.contentType !== kind.contentType)
        throw invalid(`content_type of a ${kind.stored} must be ${kind.contentType}`);
      if (req.step < 0) throw invalid("step must not be negative");
      if (req.content.byteLength === 0) throw invalid("content is empty");
      if (req.content.byteLength > artifactMaxBytes)
        throw new ConnectError(
          `the artifact is ${req.content.byteLength} bytes; at most ${artifactMaxBytes} are stored: artifact not stored`,
          Code.ResourceExhausted,
        );

      const reserved = await artifacts.reserve({
        testResultId: req.testResultId,
        leaseToken: req.leaseToken,
        kind: kind.stored,
        name: req.name,
        contentType: kind.contentType,
        sizeBytes: req.content.byteLength,
        step: req.step,
      });
      if (reserved.kind !== "reserved") throw refusal(putArtifactRefusals, reserved);
      const { artifact } = reserved;
      try {
        await contents.put(artifactKey(artifact), req.content, artifact.content_type);
      } catch (err) {
        await artifacts.abandon(artifact.id);
        logger.error(
          { err, artifactId: artifact.id, store: contents.backend },
          "artifact store refused an artifact",
        );
        throw new ConnectError("the artifact store is unavailable: artifact not stored", Code.Unavailable);
      }
      const stored = await artifacts.confirm(artifact.id);
      // A new claim took the test over, or the project was deleted, while the bytes travelled.
      if (!stored)
        throw new ConnectError("this claim is not the current one: artifact not stored", Code.Aborted);
      return { artifact: renderArtifact(stored) };
    },

    async getArtifact(req) {
      requireActor(req.actor);
      const actor = req.actor as Actor;
      if (!isIdOf("art", req.artifactId)) throw invalid("artifact_id is not an artifact id (art_…)");
      const artifact = await artifacts.find(req.artifactId);
      if (!artifact) throw artifactNotFound();
      await mayRead(deps, actor, artifact.project_id);
      const content = await contents.get(artifactKey(artifact));
      // Deleted (expired, dropped) between the two reads.
      if (!content) throw artifactNotFound();
      return { artifact: renderArtifact(artifact), content };
    },

    // Marks and deletes up to one sweep batch itself; the sweeper deletes the rest.
    async purgeProjectArtifacts(req, ctx) {
      requireService(ctx);
      if (!req.projectId) throw invalid("project_id is required");
      const left = await artifacts.purgeProject(req.projectId, sweepBatch);
      const deleted = left > 0 ? await sweeper.deleteBatch(req.projectId) : 0;
      if (left > 0)
        logger.info(
          { projectId: req.projectId, deleted, left: left - deleted },
          "artifacts of a deleted project purged",
        );
      return { deletedCount: BigInt(deleted), remainingCount: BigInt(left - deleted) };
    },
  };
}

/** The catalog's calls answer only the service identity (the token gate keeps executors out already). */
function requireService(ctx: HandlerContext): void {
  if (callerIdentity(ctx) !== "service")
    throw new ConnectError("only the catalog may call this method", Code.PermissionDenied);
}
