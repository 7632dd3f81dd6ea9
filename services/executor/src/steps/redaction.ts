/**
 * What keeps a secret out of a test's summary when the target sends it back transformed: every
 * form a value commonly takes on the way out (JSON-escaped, percent- and form-encoded,
 * HTML-escaped, base64, inside a longer base64 text such as a Basic `user:password`), computed once
 * per value, and a last check for fragments of a value that none of those forms caught. The rule
 * is in docs/runs.md ("Test cases: the step format").
 */

/**
 * Base64 forms shorter than this are not replaced: a few base64 characters turn up by chance in
 * unrelated text (a value "ok" is "b2s"), and replacing them would garble a summary while hiding
 * next to nothing. From 6 characters on (5 bytes of a value), a chance match is negligible.
 */
export const minBase64FormLength = 6;

/**
 * A quoted actual value ("got") holding this many characters of a variable's value in a row is
 * not stored at all, whatever form the rest of it took.
 */
export const fragmentLength = 8;

/** What replaces a whole actual value that still holds a fragment of a variable's value. */
export const redactedActual = "[redacted]";

const alphanumerics = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

const printableAscii = Array.from({ length: 0x7e - 0x20 }, (_, i) => String.fromCharCode(0x21 + i)).join("");
const printableExcept = (excluded: string) =>
  [...printableAscii].filter((c) => !excluded.includes(c)).join("");

/**
 * The characters each common percent-encoder leaves as they are; everything else is %XX of its
 * UTF-8 bytes (a space maybe `+`, in upper- or lower-case hex): encodeURIComponent, encodeURI,
 * the WHATWG form encoder (URLSearchParams, Java's URLEncoder), RFC 3986's unreserved set
 * (Python's quote with safe=""), that plus "/" (Python's quote by default), and what a URL
 * itself escapes in a path and in a query (`new URL`, fetch: a value in a request's path).
 */
const percentKeepSets = [
  `${alphanumerics}-_.!~*'()`,
  `${alphanumerics}-_.!~*'();,/?:@&=+$#`,
  `${alphanumerics}*-._`,
  `${alphanumerics}-._~`,
  `${alphanumerics}-._~/`,
  printableExcept('"#<>?`{}'),
  printableExcept(`"#<>'`),
];

interface PercentEncoder {
  /** 1 for a byte written as it is. */
  keep: Uint8Array;
  plusForSpace: boolean;
  /** The 16 hex digits' character codes, upper- or lower-case. */
  hex: Uint8Array;
}

const hexDigits = (lower: boolean) =>
  new Uint8Array(Buffer.from(lower ? "0123456789abcdef" : "0123456789ABCDEF", "latin1"));

const percentEncoders: readonly PercentEncoder[] = percentKeepSets.flatMap((chars) => {
  const keep = new Uint8Array(256);
  for (const char of chars) keep[char.charCodeAt(0)] = 1;
  return [false, true].flatMap((plusForSpace) =>
    [false, true].map((lower) => ({ keep, plusForSpace, hex: hexDigits(lower) })),
  );
});

function percentForms(bytes: Buffer): string[] {
  // Written byte by byte into one buffer: a string built a character at a time from a value of
  // kilobytes costs far more (in garbage) than the encoding itself.
  const out = Buffer.allocUnsafe(bytes.length * 3);
  return percentEncoders.map(({ keep, plusForSpace, hex }) => {
    let length = 0;
    for (const byte of bytes) {
      if (keep[byte]) out[length++] = byte;
      else if (byte === 0x20 && plusForSpace) out[length++] = 0x2b;
      else {
        out[length++] = 0x25;
        out[length++] = hex[byte >> 4] as number;
        out[length++] = hex[byte & 15] as number;
      }
    }
    return out.toString("latin1", 0, length);
  });
}

const hex4 = (code: number, lower: boolean) => {
  const hex = code.toString(16).padStart(4, "0");
  return `\\u${lower ? hex : hex.toUpperCase()}`;
};

/**
 * A value inside a JSON string, as serializers write it: JSON.stringify's escapes; non-ASCII as
 * \uXXXX (Python's json.dumps, PHP), in either hex case; "/" as "\/" (PHP); < > & as \u003c
 * \u003e \u0026 (Go's encoding/json).
 */
function jsonForms(value: string): string[] {
  const plain = JSON.stringify(value).slice(1, -1);
  // Only the variants that can differ from plain are computed (most values have none).
  const unicodeCases = /[\u007f-\uffff]/.test(plain) ? [true, false] : [];
  const asciis = [
    plain,
    ...unicodeCases.map((lower) => plain.replace(/[\u007f-\uffff]/g, (c) => hex4(c.charCodeAt(0), lower))),
  ];
  const slashes = plain.includes("/")
    ? asciis.flatMap((text) => [text, text.replaceAll("/", "\\/")])
    : asciis;
  return /[<>&]/.test(plain)
    ? slashes.flatMap((text) => [text, text.replace(/[<>&]/g, (c) => hex4(c.charCodeAt(0), true))])
    : slashes;
}

/** A value in HTML text or an attribute: & < > always escaped, quotes and "/" each in its common forms. */
function htmlForms(value: string): string[] {
  let forms = [value.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")];
  const variants = (char: string, replacements: string[]) => {
    if (value.includes(char))
      forms = forms.flatMap((form) => replacements.map((by) => form.replaceAll(char, by)));
  };
  variants('"', ['"', "&quot;", "&#34;"]);
  variants("'", ["'", "&#39;", "&#x27;", "&apos;"]);
  variants("/", ["/", "&#x2F;"]);
  return forms;
}

const toBase64Url = (base64: string) => base64.replaceAll("+", "-").replaceAll("/", "_");

/**
 * The base64 characters that stand for a value's bytes wherever the value sits inside a longer
 * base64 text (a Basic credential `user:password`, a token holding it). Base64 turns each 3 bytes
 * into 4 characters, so a value starting at byte offset 0, 1 or 2 (mod 3) of the text is written
 * in one of three ways; for each, the characters that depend on the value's bytes alone (not on
 * the unknown bytes before and after it) are the same in every text holding it: its aligned core.
 * The characters mixing the value's first or last bytes with its neighbours stay (a few bits of it).
 */
export function base64Cores(bytes: Buffer): string[] {
  const cores: string[] = [];
  for (const offset of [0, 1, 2]) {
    const total = offset + bytes.length;
    const text = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64");
    // Characters fixed by the unknown bytes in front: none at offset 0; at offset 1 the first two
    // characters of the group [u, v0, v1], at offset 2 the first three of [u, u, v0].
    const lead = [0, 2, 3][offset] ?? 0;
    // Characters of the last, partial group that do not depend on the byte after the value.
    const end = Math.floor(total / 3) * 4 + ([0, 1, 2][total % 3] ?? 0);
    const core = text.slice(lead, end);
    cores.push(core, toBase64Url(core));
  }
  return cores;
}

/** base64 and base64url of some bytes, with and without padding, and their aligned cores. */
function base64Forms(bytes: Buffer): string[] {
  const padded = bytes.toString("base64");
  const unpadded = padded.replace(/=+$/, "");
  return [padded, unpadded, toBase64Url(padded), toBase64Url(unpadded), ...base64Cores(bytes)].filter(
    (form) => form.length >= minBase64FormLength,
  );
}

/** Every form of a value this module recognises, the value itself first, without duplicates. */
export function encodedForms(value: string): string[] {
  // A lone surrogate (possible in a value saved from JSON) becomes U+FFFD, as a target would send it.
  const bytes = Buffer.from(value, "utf8");
  // base64 of the value as it is, and as it sits in JSON (a token's JSON payload, a JWT's claims).
  const jsonEscaped = Buffer.from(JSON.stringify(value).slice(1, -1), "utf8");
  return [
    ...new Set([
      value,
      ...jsonForms(value),
      ...percentForms(bytes),
      ...htmlForms(value),
      ...base64Forms(bytes),
      ...base64Forms(jsonEscaped),
    ]),
  ].filter((form) => form !== "");
}

/**
 * How many leading characters of a form index it. `redact` looks up each run of this many
 * characters of a text and tries only the forms found so, instead of every form of every value
 * on every string (a JSON body quoted in a summary can hold a hundred thousand strings).
 */
const anchorLength = 4;

interface Index {
  /** Every form to replace and what replaces it, longest form first. */
  sorted: [form: string, token: string][];
  /** The first `anchorLength` characters of a form -> its positions in `sorted`. */
  byAnchor: Map<string, number[]>;
  /** Forms shorter than `anchorLength` (a project's variable of a few characters): always tried. */
  short: number[];
}

/**
 * The redaction of one test: values are added as they become known (the project's variables at the
 * start, values saved by steps later), their forms computed once then, not at each summary.
 */
export class Redactor {
  readonly #forms: [form: string, token: string][] = [];
  readonly #known = new Set<string>();
  /** Built on demand, after values were added. */
  #index: Index | undefined;
  /** The values a quoted actual value may hold no fragment of. */
  readonly #values: string[] = [];

  /**
   * Adds a value to replace by `token`. A form already known keeps its first token: the project's
   * variables are added first, so one of them names a saved value that merely echoes it.
   */
  add(value: string, token: string): void {
    if (value === "") return;
    for (const form of encodedForms(value)) {
      if (this.#known.has(form)) continue;
      this.#known.add(form);
      this.#forms.push([form, token]);
    }
    if (value.length >= fragmentLength && !this.#values.includes(value)) this.#values.push(value);
    this.#index = undefined;
  }

  /**
   * Replaces every form of every value by its token. Longest forms first, so a value that contains
   * a shorter one is not left half-replaced; on a tie, the value added first names it.
   */
  redact(text: string): string {
    this.#index ??= this.#buildIndex();
    const { sorted, byAnchor, short } = this.#index;
    const candidates = [...short];
    for (let start = 0; start + anchorLength <= text.length; start++) {
      const found = byAnchor.get(text.slice(start, start + anchorLength));
      if (found) for (const position of found) candidates.push(position);
    }
    if (candidates.length === 0) return text;
    let result = text;
    for (const position of [...new Set(candidates)].sort((a, b) => a - b)) {
      const [form, token] = sorted[position] as [string, string];
      if (result.includes(form)) result = result.split(form).join(token);
    }
    return result;
  }

  #buildIndex(): Index {
    // Stable: among forms of one length, the first added comes first.
    const sorted = [...this.#forms].sort((a, b) => b[0].length - a[0].length);
    const byAnchor = new Map<string, number[]>();
    const short: number[] = [];
    for (const [position, [form]] of sorted.entries()) {
      if (form.length < anchorLength) {
        short.push(position);
        continue;
      }
      const anchor = form.slice(0, anchorLength);
      const positions = byAnchor.get(anchor);
      if (positions) positions.push(position);
      else byAnchor.set(anchor, [position]);
    }
    return { sorted, byAnchor, short };
  }

  /**
   * Whether the text still holds `fragmentLength` characters in a row of a value, as they are or
   * inside a JSON string (a quoted value escapes `"` and `\`). Meant for short texts (a clipped
   * actual value): it compares each window of the text with each value.
   */
  holdsFragment(text: string): boolean {
    if (this.#values.length === 0) return false;
    const texts = text.includes("\\") ? [text, unescapeJson(text)] : [text];
    for (const candidate of texts) {
      for (let start = 0; start + fragmentLength <= candidate.length; start++) {
        const window = candidate.slice(start, start + fragmentLength);
        if (this.#values.some((value) => value.includes(window))) return true;
      }
    }
    return false;
  }
}

/** Undoes JSON string escapes where they can be read; a broken escape (a clipped text) stays. */
function unescapeJson(text: string): string {
  const simple: Record<string, string> = { b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
  return text.replace(/\\(u[0-9a-fA-F]{4}|["\\/bfnrt])/g, (_, code: string) =>
    code.length === 5 ? String.fromCharCode(Number.parseInt(code.slice(1), 16)) : (simple[code] ?? code),
  );
}
