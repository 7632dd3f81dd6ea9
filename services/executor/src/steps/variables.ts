/**
 * `{{NAME}}` interpolation and the redaction that keeps variable values inside the executor.
 * NAME is looked up among the values saved by earlier steps first, then among the project's
 * variables (step.proto).
 */

/** A step failed; its message is the "what went wrong" half of the summary, before redaction. */
export class StepFailure extends Error {
  override name = "StepFailure";
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

  constructor(projectValues: Readonly<Record<string, string>>) {
    this.#project = new Map(Object.entries(projectValues));
  }

  /** Remembers a value saved by a step, for the following steps of the same test. */
  save(name: string, value: string): void {
    this.#saved.set(name, value);
  }

  /** Replaces every `{{NAME}}`; an unknown NAME fails the step. */
  interpolate(text: string): string {
    return text.replace(placeholder, (_, name: string) => {
      const value = this.#saved.get(name) ?? this.#project.get(name);
      if (value === undefined) throw new StepFailure(`unknown variable {{${name}}}`);
      return value;
    });
  }

  /**
   * Replaces every occurrence of a variable's value by `{{NAME}}`, wherever it came from (a
   * request, a response, a saved value that echoes it): the project's variables, and the values
   * earlier steps saved (a token from a login) of at least `minRedactedSavedLength` characters. The
   * forms a value takes when quoted in a summary (JSON-escaped, URL-encoded) are replaced too.
   * Longest values first, so a value that contains a shorter one is not left half-replaced; on a
   * tie the project's variable names it.
   */
  redact(text: string): string {
    const secrets: [string, string][] = [];
    const add = (name: string, value: string) => {
      for (const form of new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)])) {
        secrets.push([form, name]);
      }
    };
    for (const [name, value] of this.#project) if (value !== "") add(name, value);
    for (const [name, value] of this.#saved)
      if ([...value].length >= minRedactedSavedLength) add(name, value);
    // Stable: among forms of one length, the project's come first.
    secrets.sort((a, b) => b[0].length - a[0].length);
    let result = text;
    for (const [form, name] of secrets) result = result.split(form).join(`{{${name}}}`);
    return result;
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
}
