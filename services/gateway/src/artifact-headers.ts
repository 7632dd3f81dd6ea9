import type { Artifact } from "@testrun/gen/testrun/runs/v1/runs_pb";

/** The file name extension of each content type an artifact may have (runs.proto, Artifact.content_type). */
const extensions: Record<string, string> = {
  "image/png": ".png",
  "application/zip": ".zip",
  "application/json": ".json",
};

/**
 * A file name for an artifact that any client may use as it is: its name reduced to letters,
 * digits, `.`, `_` and `-` (no path, quote or control character survives), at most 100 of them,
 * then the extension of its content type. The id when nothing of the name is left.
 */
export function artifactFileName(artifact: Pick<Artifact, "id" | "name" | "contentType">): string {
  const base =
    artifact.name
      .normalize("NFKD")
      .replace(/[^A-Za-z0-9._-]+/g, "-")
      .replace(/^[.-]+|[.-]+$/g, "")
      .slice(0, 100) || artifact.id;
  return `${base}${extensions[artifact.contentType] ?? ""}`;
}

/**
 * The headers GET of an artifact (/v1/runs/{runId}/tests/{testResultId}/artifacts/{artifactId}) answers an artifact's bytes with (api/operations.ts). The
 * bytes come from a page under test: served from the API's origin, they must never be taken for
 * anything but their declared type (nosniff), never run script or load anything (the CSP, with
 * sandbox), and be saved rather than shown (attachment). Their content never changes, and only a
 * key of the project may read them: a private cache may keep them, no shared one.
 */
export function artifactResponseHeaders(artifact: Artifact): Record<string, string> {
  return {
    "Content-Type": artifact.contentType,
    "Content-Disposition": `attachment; filename="${artifactFileName(artifact)}"`,
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'; sandbox",
    "Cache-Control": "private, max-age=3600, immutable",
  };
}
