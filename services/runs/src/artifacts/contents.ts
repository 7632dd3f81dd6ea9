import type { Orm } from "@testrun/kit";
import type { Config } from "../config.js";
import { PostgresContents } from "./postgres-contents.js";
import { S3Contents } from "./s3-contents.js";

/**
 * Where the bytes of artifacts live, behind one interface (docs/runs.md, "Artifacts"): PostgreSQL
 * (the default) or an S3-compatible object store. Only the runs service holds the store's
 * credentials; the metadata (store/artifacts.ts) is always in PostgreSQL and says which keys exist.
 * Keys are made by `artifactKey`.
 */
export interface ArtifactContents {
  /** Which backend, for logs and docs: "postgres" or "s3". */
  readonly backend: "postgres" | "s3";
  /** Stores `content` under `key`, replacing what was there. */
  put(key: string, content: Uint8Array, contentType: string): Promise<void>;
  /** The bytes under `key`; undefined when there are none. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Deletes the keys; a key without bytes is no error. */
  delete(keys: readonly string[]): Promise<void>;
  /** Lets go of its connections (the service is stopping). */
  close(): void;
}

/** An artifact's key in the store: by project and run, so an operator can find a project's objects. */
export const artifactKey = (row: { project_id: string; run_id: string; id: string }): string =>
  `${row.project_id}/${row.run_id}/${row.id}`;

/** The store the configuration names. */
export function artifactContents(config: Config, orm: Orm): ArtifactContents {
  if (config.ARTIFACT_STORE === "postgres") return new PostgresContents(orm);
  return new S3Contents({
    bucket: config.ARTIFACT_S3_BUCKET ?? "",
    prefix: config.ARTIFACT_S3_PREFIX,
    endpoint: config.ARTIFACT_S3_ENDPOINT,
    region: config.ARTIFACT_S3_REGION,
    forcePathStyle: config.ARTIFACT_S3_FORCE_PATH_STYLE,
    credentials:
      config.ARTIFACT_S3_ACCESS_KEY_ID && config.ARTIFACT_S3_SECRET_ACCESS_KEY
        ? {
            accessKeyId: config.ARTIFACT_S3_ACCESS_KEY_ID,
            secretAccessKey: config.ARTIFACT_S3_SECRET_ACCESS_KEY,
          }
        : undefined,
  });
}
