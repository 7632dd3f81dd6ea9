import {
  DeleteObjectsCommand,
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import type { ArtifactContents } from "./contents.js";

export interface S3Options {
  bucket: string;
  /** Prepended to every key (e.g. `testrun/`). */
  prefix: string;
  /** Unset: AWS S3 itself. */
  endpoint?: string;
  region: string;
  /** `endpoint/bucket/key` rather than `bucket.endpoint/key`: what most S3-compatible stores need. */
  forcePathStyle: boolean;
  /** Unset: the SDK's default chain (environment, pod identity, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/** DeleteObjects takes at most this many keys a call. */
const deleteBatch = 1_000;

/**
 * How long one request may take: an upload of the largest artifact (256 MiB at most by the config's
 * bound) on a slow link still fits, and a hung store cannot hold a PutArtifact for ever. The upload
 * grace of the sweeper (artifacts/sweeper.ts) is longer than the retries of this together.
 */
export const s3RequestTimeoutMs = 60_000;

/**
 * Artifact bytes in an S3-compatible object store (AWS S3, MinIO, Ceph, R2, …): one object per
 * artifact, under the configured prefix. The bucket must exist; the credentials need
 * s3:PutObject, s3:GetObject and s3:DeleteObject on the prefix (docs/runs.md, "Artifacts").
 */
export class S3Contents implements ArtifactContents {
  readonly backend = "s3";
  private readonly client: S3Client;

  constructor(private readonly options: S3Options) {
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      credentials: options.credentials,
      // Checksums only where S3 requires them (DeleteObjects): stores that are not AWS differ in
      // which of the newer checksum headers they accept.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      maxAttempts: 3,
      requestHandler: { connectionTimeout: 5_000, requestTimeout: s3RequestTimeoutMs },
    });
  }

  private key(key: string): string {
    return `${this.options.prefix}${key}`;
  }

  async put(key: string, content: Uint8Array, contentType: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.options.bucket,
        Key: this.key(key),
        Body: content,
        ContentType: contentType,
        ContentLength: content.byteLength,
      }),
    );
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      const object = await this.client.send(
        new GetObjectCommand({ Bucket: this.options.bucket, Key: this.key(key) }),
      );
      return await object.Body?.transformToByteArray();
    } catch (error) {
      if (error instanceof NoSuchKey) return undefined;
      throw error;
    }
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (let from = 0; from < keys.length; from += deleteBatch) {
      const batch = keys.slice(from, from + deleteBatch);
      const result = await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.options.bucket,
          Delete: { Objects: batch.map((key) => ({ Key: this.key(key) })), Quiet: true },
        }),
      );
      // A missing key is no error for S3; anything reported here is (access denied, say).
      const failed = result.Errors ?? [];
      if (failed.length > 0)
        throw new Error(
          `the object store did not delete ${failed.length} of ${batch.length} artifacts (first: ${failed[0]?.Code})`,
        );
    }
  }

  /** Closes its connections. */
  close(): void {
    this.client.destroy();
  }
}
