// What a test's browser steps leave behind for the runs service to store (PutArtifact), and the
// bounds on what one test may hold in the executor's memory until then (docs/runs.md, "Browser
// steps").
import { ArtifactKind } from "@testrun/gen/testrun/runs/v1/runs_pb";

export { ArtifactKind };

export interface Artifact {
  kind: ArtifactKind;
  /** A screenshot step's name, "failure", "trace" or "browser-log". */
  name: string;
  contentType: "image/png" | "application/zip" | "application/json";
  /** Already redacted where it can be (trace, log); a screenshot is masked (browser/mask.ts). */
  content: Uint8Array;
  /** The step (1 for the first) it was taken at; 0 for the whole test (trace, log). */
  step: number;
}

/** One screenshot's PNG, at most (a full-page screenshot of a very long page can be tens of MiB). */
export const maxScreenshotBytes = 5 * 1024 * 1024;

/** All the screenshots of one test together, at most (the failure screenshot included). */
export const maxScreenshotBytesPerTest = 20 * 1024 * 1024;

/** Entries of the browser log kept per test; later ones are only counted. */
export const maxLogEntries = 100;

/** Characters of one log entry's text (a console message, an error) kept, and of its URL. */
export const maxLogTextLength = 1000;
export const maxLogUrlLength = 2000;
