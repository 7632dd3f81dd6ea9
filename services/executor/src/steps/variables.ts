/**
 * `{{NAME}}` interpolation and the redaction that keeps variable values inside the executor.
 * NAME is looked up among the values saved by earlier steps first, then among the project's
 * variables (step.proto).
 */

import { Redactor, redactedActual } from "./redaction.js";
import { type Part, quoted, Said, say } from "./wording.js";

/**
 * Why a step failed, decided where the failure is found, from what was found, never from its words
 * (docs/runs.md, "Why a test failed"). The system's causes (a browser that crashed, an executor
 * lost) are not a step's: the executor and the runs service decide those.
 */
export type StepFailureCause = "assertion" | "locator" | "timeout" | "network" | "egress_refused";

/** A step failed; its message is the "what went wrong" half of the summary, before redaction. */
export class StepFailure extends Error {
  override name = "StepFailure";
  /**
   * The message in pieces (wording.ts): the executor's own words, never redacted, and what came
   * from elsewhere. A plain string is all from elsewhere, so a message nobody marked is redacted whole.
   */
  readonly said: Said;

  /** `failureCause`: an expectation not met unless the place that found the failure says otherwise. */
  constructor(
    said: Said | string,
    readonly failureCause: StepFailureCause = "assertion",
  ) {
    const pieces = said instanceof Said ? said : quoted(said);
    super(pieces.toString());
    this.said = pieces;
  }
}

const placeholder = /\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g;

/**
 * Saved values shorter than this stay in summaries. A saved value is often a secret (a session
 * token), but it is also often a small id, count or flag ("7", "ok"), and replacing those wherever
 * the characters occur would garble the summary ("got 4{{count}}1") while hiding nothing.
 */
const minRedactedSavedLength = 4;

export class Variables {
  readonly #saved = new Map<string, string>();
  readonly #project: ReadonlyMap<string, string>;
  /** Computed once per test, then as steps save values, not at each summary. */
  readonly #redactor = new Redactor();

  constructor(projectValues: Readonly<Record<string, string>>) {
    this.#project = new Map(Object.entries(projectValues));
    for (const [name, value] of this.#project) this.#redactor.add(value, `{{${name}}}`);
  }

  /**
   * Remembers a value saved by a step, for the following steps of the same test. It is redacted
   * from then on (from `minRedactedSavedLength` characters), and so is a value it replaces: that
   * one was a secret too (an earlier session token).
   */
  save(name: string, value: string): void {
    this.#saved.set(name, value);
    if ([...value].length >= minRedactedSavedLength) this.#redactor.add(value, `{{${name}}}`);
  }

  /** The values a picture must not show (screenshots mask them): the project's, and saved ones as redacted. */
  secretValues(): string[] {
    const saved = [...this.#saved.values()].filter((value) => [...value].length >= minRedactedSavedLength);
    return [...new Set([...this.#project.values(), ...saved])].filter((value) => value.length > 0);
  }

  /** Replaces every `{{NAME}}`; an unknown NAME fails the step. */
  interpolate(text: string): string {
    return text.replace(placeholder, (_, name: string) => {
      const value = this.#saved.get(name) ?? this.#project.get(name);
      if (value === undefined) throw new StepFailure(say`unknown variable {{${name}}}`);
      return value;
    });
  }

  /**
   * Replaces a variable's value by `{{NAME}}`, wherever it came from (a request, a response, a
   * saved value that echoes it), everywhere from `minInWordLength` characters on, and a shorter
   * value only where it stands alone (not inside a word): the project's variables, and the values
   * earlier steps saved (a token from a login) of at least `minRedactedSavedLength` characters. The
   * forms a value takes when a target sends it back or a summary quotes it are replaced too
   * (JSON-escaped, percent- and form-encoded, HTML-escaped, base64, redaction.ts). Longest forms
   * first, so a value that contains a shorter one is not left half-replaced; on a tie the
   * project's variable names it.
   */
  redact(text: string): string {
    return this.#redactor.redact(text);
  }

  /**
   * `redact` over a summary's pieces: the executor's own words are left as they are, whatever
   * value they hold ("step 1 passed" with a variable `1` or `step`), redaction.ts redactParts.
   */
  redactParts(parts: readonly Part[]): Part[] {
    return this.#redactor.redactParts(parts);
  }

  /** Redacts every string inside a parsed JSON value (keys included), before it is quoted as JSON. */
  redactValue(value: unknown): unknown {
    if (typeof value === "string") return this.redact(value);
    if (Array.isArray(value)) return value.map((item) => this.redactValue(item));
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [this.redact(key), this.redactValue(item)]),
      );
    }
    return value;
  }

  /**
   * The last check on an actual value a failed expectation quotes ("got ..."), once redacted and
   * clipped: if it still holds `fragmentLength` characters in a row of a variable's value, the
   * target sent the value back in a form `redact` does not know (cut, changed in part), and the
   * whole actual value is replaced by `redactedActual`. A summary without the actual value is less
   * helpful; one with part of a secret is a leak.
   */
  guardActual(shown: string): string {
    return this.#redactor.holdsFragment(shown) ? redactedActual : shown;
  }

  /** guardActual's test alone: whether a redacted text still holds a fragment of a value. */
  holdsFragment(text: string): boolean {
    return this.#redactor.holdsFragment(text);
  }
}
