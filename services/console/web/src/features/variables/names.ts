// What a variable's name and value may be, in words and as the name is typed; the catalog
// (CatalogService.CreateVariable) has the last word.

/** The catalog's rule for names, in words. */
export const nameRule =
  "A letter or underscore, then letters, digits and underscores; at most 64. Names that differ only in letter case count as the same.";
/** The same rule, to say as the name is typed what the catalog will answer. */
export const namePattern = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** What is wrong with a name being typed, in a few words; undefined when it is fine (or empty). */
export function nameProblem(name: string): string | undefined {
  if (name === "" || namePattern.test(name)) return undefined;
  if (/^[0-9]/.test(name)) return "Must not start with a digit.";
  const bad = [...name].find((c) => !/[A-Za-z0-9_]/.test(c));
  if (bad) return `“${bad === " " ? "space" : bad}” is not allowed: only letters, digits and underscores.`;
  return "At most 64 characters.";
}

export const valueHint =
  "1 to 8192 bytes. Write-only: once saved, nobody can read it back, here or through the API.";
