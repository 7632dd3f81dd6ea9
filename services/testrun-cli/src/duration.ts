// Durations on the command line: `90s`, `30m`, `1h`, `1h30m`, `500ms`. A bare number is refused, so
// nobody waits an hour believing they asked for sixty seconds.

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds of a duration such as `30m` or `1h30m`; undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(trimmed)) return undefined;
  let total = 0;
  for (const [, amount, , unit] of trimmed.matchAll(/(\d+(\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(amount) * (units[unit ?? ""] ?? Number.NaN);
  }
  return Number.isFinite(total) && total > 0 ? Math.round(total) : undefined;
}

/** `1h 2m 3s`, `4.2s`, `120ms`: for people. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`;
  const seconds = Math.round(ms / 1000);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return [h && `${h}h`, m && `${m}m`, s && `${s}s`].filter(Boolean).join(" ");
}
