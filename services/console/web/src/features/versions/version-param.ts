// `?version=N` in a page's address: which kept version of a test case to show (a run's test links
// there).

/** A whole number from 1; null when absent; NaN when it is anything else. */
export function versionParam(value: string | null): number | null {
  if (value === null) return null;
  return /^[1-9][0-9]{0,9}$/.test(value) ? Number(value) : Number.NaN;
}
