import { type BackgroundLoop, startLoop } from "@testrun/kit";
import type { Logger } from "pino";
import type { ArtifactStore } from "../store/artifacts.js";
import { type ArtifactContents, artifactKey } from "./contents.js";

/** Artifacts handled per kind of work per pass; the next pass continues. */
export const sweepBatch = 500;

/**
 * How long a sweeper keeps the artifacts it took for deletion from the others: a batch's deletion
 * (one DeleteObjects call per 1000 keys, or one statement) ends well within it; if it fails, they
 * are taken again after it.
 */
const holdMs = 5 * 60_000;

/**
 * Deletes artifacts that must go (docs/runs.md, "Artifacts"): those past their retention, those of
 * deleted projects, those of earlier attempts, and uploads that failed or never finished. Bytes
 * are deleted from the store first, then the rows, so that bytes are never left without a row to
 * find them by; a failure leaves the rows for a later pass. A background loop like the reconciler;
 * replicas may sweep at the same time (each takes its own rows).
 */
export class ArtifactSweeper {
  private loop: BackgroundLoop | undefined;

  constructor(
    private readonly store: ArtifactStore,
    private readonly contents: ArtifactContents,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  /** Runs a pass now, then one every interval, each after the previous ended. */
  start(): void {
    const { intervalMs, logger } = this;
    this.loop = startLoop({ name: "artifact sweeper", intervalMs, pass: () => this.pass(), logger });
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
  }

  /** One pass: marks what is due, then deletes a batch. Never throws. */
  async pass(): Promise<void> {
    try {
      await this.store.markDue(sweepBatch);
      const deleted = await this.deleteBatch();
      if (deleted > 0) this.logger.info({ deleted, store: this.contents.backend }, "artifacts deleted");
    } catch (err) {
      this.logger.error({ err }, "artifact sweep failed; the next one retries");
    }
  }

  /** Deletes up to one batch of the artifacts due (of one project only, when given): bytes, then rows. */
  async deleteBatch(projectId?: string): Promise<number> {
    const due = await this.store.takeDeletable(sweepBatch, holdMs, projectId);
    if (due.length === 0) return 0;
    await this.contents.delete(due.map(artifactKey));
    await this.store.deleteRows(due.map((row) => row.id));
    return due.length;
  }
}
