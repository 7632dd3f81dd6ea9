// What a run's tests produced, as its readers want it (docs/rest-api.md, "Artifacts"): which
// screenshot shows a failure, in which order to list them, and sizes as people read them. The
// CLI's summaries and downloads and the MCP tools' get_run use the same answers.
import type { Artifact, TestResult } from "./types.js";

const MiB = 1024 * 1024;

/** The screenshot a failed test is best seen by: the one taken when it failed, else its first. */
export function failureScreenshot(test: TestResult): Artifact | undefined {
  const screenshots = (test.artifacts ?? []).filter((a) => a.kind === "screenshot");
  return screenshots.find((a) => a.name === "failure") ?? screenshots[0];
}

/**
 * A test's artifacts in the order a reader wants them: its failure screenshot first (GitLab shows
 * only a test case's first attachment), then the rest as stored.
 */
export function artifactsInOrder(test: TestResult): Artifact[] {
  const all = test.artifacts ?? [];
  const first = test.status === "FAILED" ? failureScreenshot(test) : undefined;
  return first ? [first, ...all.filter((a) => a !== first)] : all;
}

/** Bytes as people read them: 812 B, 3.4 KiB, 20.0 MiB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < MiB) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 * MiB) return `${(bytes / MiB).toFixed(1)} MiB`;
  return `${(bytes / (1024 * MiB)).toFixed(1)} GiB`;
}
