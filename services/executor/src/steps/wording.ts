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

/**
 * A piece of a summary: the executor's own words (`own`: its fixed phrases, step numbers, the
 * numbers a test sets) or text that came from elsewhere (a step's name, a quoted template, what
 * the target or the page answered). Redaction replaces variable values in the latter only, so a
 * value such as "step" or "1" can never rewrite "step 1 passed" (docs/security.md, "Redaction").
 */
export interface Part {
  text: string;
  own: boolean;
}

/** A summary, or part of one, as pieces that remember who wrote them. */
export class Said {
  constructor(readonly parts: readonly Part[]) {}

  toString(): string {
    return this.parts.map((part) => part.text).join("");
  }
}

/** Text the executor wrote itself (a number it counted, a unit): never redacted. */
export const own = (text: string | number) => new Said([{ text: String(text), own: true }]);

/** Text from elsewhere, to be redacted: a plain string is never taken for the executor's own. */
export const quoted = (text: string) => new Said([{ text, own: false }]);

/**
 * A summary phrase: the template's literal text is the executor's own; each string put into it
 * is from elsewhere (redacted), each Said keeps its pieces. Numbers must be wrapped (`own(n)` for
 * one the executor or the test's settings chose, `String(n)` for one the target sent), so that
 * every number's origin is decided where it is written.
 */
export function say(literals: TemplateStringsArray, ...pieces: (Said | string)[]): Said {
  const parts: Part[] = [];
  const push = (part: Part) => {
    if (part.text !== "") parts.push(part);
  };
  literals.forEach((literal, index) => {
    push({ text: literal, own: true });
    const piece = pieces[index];
    if (piece === undefined) return;
    if (piece instanceof Said) for (const part of piece.parts) push(part);
    else push({ text: piece, own: false });
  });
  return new Said(parts);
}
