// How summaries word what they quote: shared by the step kinds and the runner, so every summary
// names a duration or clips a value the same way.

/** "10 minutes", "90 s", "250 ms": how a duration (a timeout, a deadline) is named in summaries. */
export const durationText = (ms: number) =>
  ms % 60_000 === 0
    ? `${ms / 60_000} minute${ms === 60_000 ? "" : "s"}`
    : ms % 1000 === 0
      ? `${ms / 1000} s`
      : `${ms} ms`;

/** A quoted text cut to `max` characters, so that one value cannot fill a 300-character summary. */
export const clip = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** "1 MiB", "512 KiB" or "100 bytes": how a cap is named in summaries. */
export function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / 1024 / 1024} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
