// What a run's tests produced (screenshots, traces, browser logs; docs/rest-api.md, "Artifacts"):
// `--artifacts DIR`, which downloads them all (docs/pipelines.md, "Artifacts"; which screenshot
// shows a failure is the client's, @testrun/api-client artifacts.ts). A download that fails is said and skipped: it never changes the
// run's exit code.
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname, relative, resolve, sep } from "node:path";
import { pipeline } from "node:stream/promises";
import {
  type Artifact,
  type ArtifactRef,
  formatBytes,
  type Run,
  type TestResult,
  type TestrunClient,
  TooLarge,
  withRetries,
} from "@testrun/api-client";
import { explain } from "./errors.js";

const MiB = 1024 * 1024;

/** The largest file `--artifacts` writes: the most the runs service stores at any setting (ARTIFACT_MAX_BYTES). */
export const maxFileBytes = 256 * MiB;
/** The most `--artifacts` writes for one command, all files together. */
export const maxTotalBytes = 1024 * MiB;
/** A download's deadline: the client's request timeout plus this per MiB of the file (1 MiB/s at least). */
const msPerMiB = 1000;

/**
 * A piece of a file name made of `text`: letters, digits, `.`, `_` and `-` only (no separator, no
 * `..`, nothing a shell or a file system treats specially), at most `max` of them; `fallback` when
 * nothing is left.
 */
export function safeName(text: unknown, fallback: string, max = 60): string {
  const name = String(text ?? "")
    .normalize("NFKD")
    // Accents go (é is e and a combining mark once decomposed); anything else not plain becomes -.
    .replace(/\p{M}+/gu, "")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[.-]+/, "")
    .slice(0, max)
    .replace(/[.-]+$/, "");
  return name || fallback;
}

const extensions: Record<string, string> = {
  "image/png": ".png",
  "application/zip": ".zip",
  "application/json": ".json",
};

/**
 * Where an artifact goes under DIR: `<test name>-<test result id>/<step>-<name>-<artifact id>.<ext>`,
 * every part reduced by safeName. The artifact's id keeps file names unique across the whole run
 * (Jenkins keeps a test class's attachments by file name alone). Undefined if the path would
 * somehow leave DIR.
 */
export function artifactPath(dir: string, test: TestResult, artifact: Artifact): string | undefined {
  const root = resolve(dir);
  const folder = `${safeName(test.name, "test")}-${safeName(test.id, "test")}`;
  const step = Number.isSafeInteger(artifact.step) && artifact.step >= 0 ? artifact.step : 0;
  const extension = extensions[artifact.contentType] ?? ".bin";
  const file = `${step}-${safeName(artifact.name, safeName(artifact.kind, "artifact"))}-${safeName(artifact.id, "artifact")}${extension}`;
  const path = resolve(root, folder, file);
  return path.startsWith(root + sep) ? path : undefined;
}

/**
 * How a JUnit report names a downloaded file in `[[ATTACHMENT|…]]`: relative to CI_PROJECT_DIR
 * when GitLab runs the job and the file is inside it (GitLab reads attachments so), else absolute
 * (Jenkins' JUnit attachments plugin, and any other reader).
 */
export function attachmentPath(file: string, env: Record<string, string | undefined>): string {
  const project = env.CI_PROJECT_DIR?.trim();
  if (!project) return file;
  const inside = relative(resolve(project), file);
  return inside && !inside.startsWith("..") && !inside.startsWith(sep) ? inside : file;
}

/**
 * Every artifact of a test: those of its earlier attempts (a flaky pass's failure screenshot and
 * response), then its own (its last attempt's), each once.
 */
export function artifactsOf(test: TestResult): Artifact[] {
  const all = [...(test.attempts ?? []).flatMap((attempt) => attempt.artifacts), ...(test.artifacts ?? [])];
  return all.filter((artifact, i) => all.findIndex((a) => a.id === artifact.id) === i);
}

export interface DownloadOptions {
  signal?: AbortSignal;
  /** A download that failed, and why (said on stderr). */
  onFailure: (artifact: Artifact, test: TestResult, reason: string) => void;
  onRetry?: (reason: string, delayMs: number) => void;
  maxFileBytes?: number;
  maxTotalBytes?: number;
}

export interface Downloads {
  /** The file of each artifact downloaded, by artifact id: absolute paths. */
  files: Map<string, string>;
  bytes: number;
  failed: number;
}

/**
 * Downloads every artifact of the run's tests, their earlier attempts' too (artifactsOf), into `dir` (artifactPath), each through a temporary
 * file renamed into place once whole, so a file that is there is complete. Each is one request
 * (429, 5xx and lost connections retried for up to 30 s, as reads are); a file larger than its
 * `size` says, larger than maxFileBytes, or past maxTotalBytes for all is not written.
 */
export async function downloadArtifacts(
  client: Pick<TestrunClient, "openArtifact">,
  run: Run,
  dir: string,
  options: DownloadOptions,
): Promise<Downloads> {
  const fileLimit = options.maxFileBytes ?? maxFileBytes;
  const totalLimit = options.maxTotalBytes ?? maxTotalBytes;
  const result: Downloads = { files: new Map(), bytes: 0, failed: 0 };
  for (const test of run.tests) {
    for (const artifact of artifactsOf(test)) {
      const fail = (reason: string) => {
        result.failed += 1;
        options.onFailure(artifact, test, reason);
      };
      const path = artifactPath(dir, test, artifact);
      const size = Number(artifact.size);
      if (!path) {
        fail("no safe file name");
        continue;
      }
      if (!Number.isSafeInteger(size) || size < 0) {
        fail(`its size (${artifact.size}) is not a size`);
        continue;
      }
      if (size > fileLimit) {
        fail(`${formatBytes(size)} is over the ${formatBytes(fileLimit)} a file may have`);
        continue;
      }
      if (result.bytes + size > totalLimit) {
        fail(
          `${formatBytes(size)} more would pass the ${formatBytes(totalLimit)} one command downloads (${formatBytes(result.bytes)} so far)`,
        );
        continue;
      }
      try {
        const written = await withRetries(
          () =>
            download(
              client,
              { runId: run.id, testResultId: test.id, id: artifact.id },
              path,
              size,
              options.signal,
            ),
          {
            outageMs: 30_000,
            ...(options.signal && { signal: options.signal }),
            ...(options.onRetry && { onRetry: options.onRetry }),
          },
        );
        result.files.set(artifact.id, path);
        result.bytes += written;
      } catch (error) {
        if (options.signal?.aborted) throw error;
        fail(
          error instanceof TooLarge
            ? `the API sent more than the ${size} bytes it is listed with`
            : explain(error),
        );
      }
    }
  }
  return result;
}

/** One artifact to `path`, through a temporary file beside it; answers the bytes written. */
async function download(
  client: Pick<TestrunClient, "openArtifact">,
  ref: ArtifactRef,
  path: string,
  size: number,
  signal: AbortSignal | undefined,
): Promise<number> {
  const answer = await client.openArtifact(ref, {
    ...(signal && { signal }),
    extraTimeoutMs: Math.ceil(size / MiB) * msPerMiB,
  });
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.${randomBytes(6).toString("hex")}.part`;
  let written = 0;
  async function* counted() {
    for await (const chunk of answer.body(size)) {
      written += chunk.byteLength;
      yield chunk;
    }
  }
  try {
    // "wx": a file created here, never an existing one or a link someone left at that name.
    await pipeline(counted, createWriteStream(partial, { flags: "wx" }));
    await rename(partial, path);
    return written;
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}
