/**
 * Where the bytes of artifacts live, behind one interface (docs/runs.md, "Artifacts"): PostgreSQL
 * (the default) or an S3-compatible object store. Only the runs service holds the store's
 * credentials; the metadata (store/artifacts.ts) is always in PostgreSQL and says which keys exist.
 * Keys are made by `artifactKey`. The backends implement it (postgres-contents.ts, s3-contents.ts);
 * open-contents.ts picks the one the configuration names.
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
