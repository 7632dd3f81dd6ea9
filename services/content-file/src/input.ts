// Reading people-written JSON/YAML documents field by field, so every mistake is reported with the
// path of the field in the document (`[1].steps[0].http.method: must be a string`).

/**
 * A document, or a value in it, that is not what it should be. `path` is where (empty for the whole
 * document); the message starts with it, unless the problem is the document's own (broken syntax).
 */
export class InputError extends Error {
  override readonly name = "InputError";

  constructor(
    readonly path: string,
    readonly problem: string,
    message = `${path || "the document"}: ${problem}`,
  ) {
    super(message);
  }

  /** A problem of the document as a whole: the message is the problem alone. */
  static ofDocument(problem: string): InputError {
    return new InputError("", problem, problem);
  }
}

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** `base.key`, or `key` at the root. */
export const child = (base: string, key: string) => (base ? `${base}.${key}` : key);

/** `base[index]`. */
export const item = (base: string, index: number) => `${base}[${index}]`;

const kindOf = (value: unknown) =>
  value === undefined
    ? "missing"
    : value === null
      ? "null"
      : Array.isArray(value)
        ? "a list"
        : typeof value === "object"
          ? "an object"
          : typeof value;

/**
 * A plain object; with `allowed`, its keys must all be among them (an unknown key is named, with a
 * likely fix: typos must not be silently ignored).
 */
export function object(value: unknown, path: string, allowed?: readonly string[]): Record<string, unknown> {
  required(value, path);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InputError(path, `must be an object, not ${kindOf(value)}`);
  }
  if (!allowed) return value as Record<string, unknown>;
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw new InputError(child(path, key), unknownFieldProblem(key, allowed));
  }
  return value as Record<string, unknown>;
}

function unknownFieldProblem(key: string, allowed: readonly string[]): string {
  const camel = key.replace(/[_-]([a-z])/g, (_, letter: string) => letter.toUpperCase());
  const hint = allowed.find((name) => name.toLowerCase() === camel.toLowerCase());
  if (hint) return `unknown field (did you mean "${hint}"?)`;
  return `unknown field; expected one of: ${allowed.join(", ")}`;
}

function required(value: unknown, path: string): void {
  if (value === undefined) throw new InputError(path, "is required");
}

export function string(value: unknown, path: string): string {
  required(value, path);
  if (typeof value !== "string") throw new InputError(path, `must be a string, not ${kindOf(value)}`);
  return value;
}

export function optionalString(value: unknown, path: string): string | undefined {
  return value === undefined ? undefined : string(value, path);
}

export function boolean(value: unknown, path: string): boolean {
  required(value, path);
  if (typeof value !== "boolean") throw new InputError(path, `must be true or false, not ${kindOf(value)}`);
  return value;
}

/** A whole number that fits the int32 fields of the protos (range rules are the service's). */
export function int32(value: unknown, path: string): number {
  required(value, path);
  if (typeof value !== "number" || !Number.isInteger(value) || Math.abs(value) > 2_147_483_647) {
    throw new InputError(
      path,
      `must be a whole number, not ${typeof value === "number" ? value : kindOf(value)}`,
    );
  }
  return value;
}

export function list(value: unknown, path: string): unknown[] {
  required(value, path);
  if (!Array.isArray(value)) throw new InputError(path, `must be a list, not ${kindOf(value)}`);
  return value;
}

/** A list of strings; a single string is taken as a list of one. */
export function stringList(value: unknown, path: string): string[] {
  if (typeof value === "string") return [value];
  return list(value, path).map((entry, index) => string(entry, item(path, index)));
}

/**
 * An object of text values (headers, query parameters, saved names). Numbers and booleans are
 * taken as their text, because YAML turns `page: 2` into a number.
 */
export function stringMap(value: unknown, path: string): Record<string, string> {
  const entries = Object.entries(object(value, path));
  return Object.fromEntries(
    entries.map(([key, entry]) => {
      if (typeof entry === "number" || typeof entry === "boolean") return [key, String(entry)];
      return [key, string(entry, child(path, key))];
    }),
  );
}

/** Any JSON value: YAML can also produce things JSON cannot hold (`.inf`, `.nan`). */
export function json(value: unknown, path: string): JsonValue {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new InputError(path, "must be a finite number");
    return value;
  }
  if (Array.isArray(value)) return value.map((entry, index) => json(entry, item(path, index)));
  if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(
      Object.entries(value).map(([key, entry]) => [key, json(entry, child(path, key))]),
    );
  }
  throw new InputError(path, `must be a JSON value, not ${kindOf(value)}`);
}
