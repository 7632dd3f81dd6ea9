import type { Orm } from "@testrun/kit";
import type { Config } from "../config.js";
import type { ArtifactContents } from "./contents.js";
import { PostgresContents } from "./postgres-contents.js";
import { S3Contents } from "./s3-contents.js";

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
