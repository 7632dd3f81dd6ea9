// What the rows of a step's form share: a label inside a sentence, the notes a row's value is
// described by, and the bound beside an Add button.
import type { Said } from "./kind-editor";

/** A label inside a sentence: "Header check" -> "header check", "JSON check" stays. */
export const inSentence = (label: string) =>
  /^[A-Z][a-z]/.test(label) ? label.charAt(0).toLowerCase() + label.slice(1) : label;

/** Described by a row's notes without being the control they mark invalid (a row's value). */
export function describedOnly(rowId: string, { error, warning }: Said) {
  const ids = [error && `${rowId}-error`, warning && `${rowId}-warning`].filter(Boolean).join(" ");
  return ids ? { "aria-describedby": ids } : {};
}

/** "3 of 50": shown beside an Add button; at the bound the button is off and says why. */
export function Bound({ count, max, what }: { count: number; max: number; what: string }) {
  if (count < max) return null;
  return (
    <small className="muted" role="status">
      {max} {what}: the most a step takes.
    </small>
  );
}
