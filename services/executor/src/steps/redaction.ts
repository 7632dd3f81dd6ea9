/**
 * What keeps a secret out of a test's summary when the target sends it back transformed: every
 * form a value commonly takes on the way out (JSON-escaped, percent- and form-encoded,
 * HTML-escaped, base64, inside a longer base64 text such as a Basic `user:password`), computed once
 * per value, and a last check for fragments of a value that none of those forms caught. The rule
 * is in docs/runs.md ("Test cases: the step format").
 */

import type { Part } from "./wording.js";

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
  const goForms = /[<>&]/.test(plain)
    ? slashes.flatMap((text) => [text, text.replace(/[<>&]/g, (c) => hex4(c.charCodeAt(0), true))])
    : slashes;
  // HTML-safe serializers (.NET's System.Text.Json by default) also write " ' + < > & ` as
  // \u00XX, in upper-case hex like non-ASCII. An escaped quote is the pair \" (a \\ pair before it
  // stays as it is).
  if (!/["'+<>&`]/.test(value)) return goForms;
  const htmlSafe = [true, false].map((lower) =>
    plain
      .replace(/[\u007f-\uffff]/g, (c) => hex4(c.charCodeAt(0), lower))
      .replace(/\\\\|\\"|['+<>&`]/g, (c) => (c === "\\\\" ? c : hex4(c.at(-1)?.charCodeAt(0) ?? 0, lower))),
  );
  return [...goForms, ...htmlSafe];
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
 * Values shorter than this many characters are replaced only where they stand alone, never inside
 * a word. One to three characters turn up inside words everywhere: a value `s` replaced wherever
 * it occurs turned "1 step passed" into "1 {{V}}tep pa{{V}}{{V}}ed", which gives the value away
 * (the words around it are known) and makes every summary unreadable. From 4 characters on, chance
 * matches are rare, and a value glued to other text (`user_hunter2`) must not stay readable, so it
 * is replaced wherever it occurs. The rule is in docs/security.md ("Redaction").
 */
export const minInWordLength = 4;

/**
 * Characters that make a short value part of a word when they touch it: letters, combining marks,
 * digits and `_`, as a regular expression's \w but in every script.
 */
const wordCharacter = /^[\p{L}\p{M}\p{N}_]$/u;

/** The character (code point) ending just before `at`, or "" at the start. */
function characterBefore(text: string, at: number): string {
  if (at === 0) return "";
  const low = text.charCodeAt(at - 1);
  return low >= 0xdc00 && low <= 0xdfff && at >= 2 ? text.slice(at - 2, at) : text.slice(at - 1, at);
}

/** The character (code point) starting at `at`, or "" at the end. */
const characterAt = (text: string, at: number) =>
  at >= text.length ? "" : String.fromCodePoint(text.codePointAt(at) as number);

/**
 * Whether a short value's form at [start, end) stands alone: no word character touches it on
 * either side, whatever the value is made of (a value `"` or `/` is then not replaced in every
 * quoted text or path, only where it stands between spaces or punctuation), and no backslash comes
 * before it (`\n` and `\u00e9` in a quoted JSON text are one character each: an `n` after a
 * backslash is part of it). After a whole escape, the character it stands for is what touches it.
 */
function standsAlone(text: string, start: number, end: number): boolean {
  const escaped = escapeBefore(text, start);
  const before = escaped ?? characterBefore(text, start);
  if ((escaped === undefined && before === "\\") || wordCharacter.test(before)) return false;
  return !wordCharacter.test(characterAt(text, end));
}

const jsonEscapes: Record<string, string> = { b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/**
 * The character a JSON string escape ending just before `at` stands for, or undefined when none
 * does: in a quoted body, a value at the start of a line (`\nab`), after a tab, an escaped
 * backslash (`C:\\ab`) or Go's `\u003c` stands alone, though the escape ends in a letter or digit.
 * An escape's backslash must not be escaped itself (`\\nab` is a backslash, then the word "nab").
 */
function escapeBefore(text: string, at: number): string | undefined {
  const match = /\\(u[0-9a-fA-F]{4}|["\\/bfnrt])$/.exec(text.slice(Math.max(0, at - 6), at));
  if (!match) return undefined;
  let backslashes = 0;
  for (let i = at - match[0].length; i >= 0 && text[i] === "\\"; i--) backslashes++;
  if (backslashes % 2 === 0) return undefined;
  const code = match[1] as string;
  return code.length === 5
    ? String.fromCharCode(Number.parseInt(code.slice(1), 16))
    : (jsonEscapes[code] ?? code);
}

/** A form to replace: what replaces it, and whether it is replaced only where it stands alone. */
interface Form {
  form: string;
  token: string;
  /** A short value's form (shorter than `minInWordLength`): only where it stands alone. */
  alone: boolean;
}

/** One replacement: [start, end) of the text by `token`. */
interface Match {
  start: number;
  end: number;
  token: string;
}

/**
 * How many leading characters of a form index it. `redact` looks up each run of this many
 * characters of a text and tries only the forms found so, instead of every form of every value
 * on every string (a JSON body quoted in a summary can hold a hundred thousand strings).
 */
const anchorLength = 4;

interface Index {
  /** Every form to replace, longest first. */
  sorted: Form[];
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
  /** In the order added: the first value to add a form names it. */
  readonly #forms = new Map<string, Form>();
  /** Built on demand, after values were added. */
  #index: Index | undefined;
  /** The values a quoted actual value may hold no fragment of. */
  readonly #values: string[] = [];

  /**
   * Adds a value to replace by `token`. A form already known keeps its first token: the project's
   * variables are added first, so one of them names a saved value that merely echoes it. A form
   * shared with a longer value is then replaced inside words too, as the longer value's must be.
   */
  add(value: string, token: string): void {
    if (value === "") return;
    const alone = [...value].length < minInWordLength;
    for (const form of encodedForms(value)) {
      const known = this.#forms.get(form);
      if (known) {
        if (!alone) known.alone = false;
        continue;
      }
      this.#forms.set(form, { form, token, alone });
    }
    if (value.length >= fragmentLength && !this.#values.includes(value)) this.#values.push(value);
    this.#index = undefined;
  }

  /**
   * Replaces every form of every value by its token: a value shorter than `minInWordLength` only
   * where it stands alone, a longer one wherever it occurs. Longest forms first, so a value that
   * contains a shorter one is not left half-replaced; on a tie, the value added first names it.
   */
  redact(text: string): string {
    const matches = this.#find(text, undefined);
    return matches.length === 0
      ? text
      : splice([{ text, own: false }], text, matches)
          .map((p) => p.text)
          .join("");
  }

  /**
   * `redact` over parts of a summary, leaving the executor's own words alone: a match lying wholly
   * inside them is kept (a value "step" never rewrites "step 1 passed"); one that reaches into
   * others' text is replaced, as that text may hold part of the value. The tokens put in are the
   * executor's own, so a second pass never rewrites them.
   */
  redactParts(parts: readonly Part[]): Part[] {
    const text = parts.map((part) => part.text).join("");
    let own: Uint8Array | undefined;
    if (parts.some((part) => part.own)) {
      own = new Uint8Array(text.length);
      let at = 0;
      for (const part of parts) {
        if (part.own) own.fill(1, at, at + part.text.length);
        at += part.text.length;
      }
    }
    return splice(parts, text, this.#find(text, own));
  }

  /** Where each form occurs and may be replaced, in order, none overlapping another. */
  #find(text: string, own: Uint8Array | undefined): Match[] {
    this.#index ??= this.#buildIndex();
    const { sorted, byAnchor, short } = this.#index;
    const candidates = [...short];
    for (let start = 0; start + anchorLength <= text.length; start++) {
      const found = byAnchor.get(text.slice(start, start + anchorLength));
      if (found) for (const position of found) candidates.push(position);
    }
    const matches: Match[] = [];
    if (candidates.length === 0) return matches;
    // Characters already replaced by a longer form (or one that came first), made on the first match.
    let taken: Uint8Array | undefined;
    const free = (start: number, end: number) => !taken || taken.subarray(start, end).every((t) => t === 0);
    const ownOnly = (start: number, end: number) => own?.subarray(start, end).every((o) => o === 1) ?? false;
    for (const position of [...new Set(candidates)].sort((a, b) => a - b)) {
      const { form, token, alone } = sorted[position] as Form;
      let start = text.indexOf(form);
      while (start !== -1) {
        const end = start + form.length;
        if (free(start, end) && !ownOnly(start, end) && (!alone || standsAlone(text, start, end))) {
          matches.push({ start, end, token });
          taken ??= new Uint8Array(text.length);
          taken.fill(1, start, end);
          start = text.indexOf(form, end);
        } else start = text.indexOf(form, start + 1);
      }
    }
    return matches.sort((a, b) => a.start - b.start);
  }

  #buildIndex(): Index {
    // Stable: among forms of one length, the first added comes first.
    const sorted = [...this.#forms.values()].sort((a, b) => b.form.length - a.form.length);
    const byAnchor = new Map<string, number[]>();
    const short: number[] = [];
    for (const [position, { form }] of sorted.entries()) {
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

/**
 * The parts with each match replaced by its token (an own part), the rest keeping who wrote it;
 * neighbouring parts of one writer are joined.
 */
function splice(parts: readonly Part[], text: string, matches: readonly Match[]): Part[] {
  const out: Part[] = [];
  const push = (part: Part) => {
    if (part.text === "") return;
    const last = out.at(-1);
    if (last && last.own === part.own) last.text += part.text;
    else out.push({ ...part });
  };
  let index = 0;
  let partStart = 0;
  const copy = (from: number, to: number) => {
    while (from < to) {
      let part = parts[index] as Part;
      while (partStart + part.text.length <= from) {
        partStart += part.text.length;
        part = parts[++index] as Part;
      }
      const until = Math.min(to, partStart + part.text.length);
      push({ text: part.text.slice(from - partStart, until - partStart), own: part.own });
      from = until;
    }
  };
  let cursor = 0;
  for (const { start, end, token } of matches) {
    copy(cursor, start);
    push({ text: token, own: true });
    cursor = end;
  }
  copy(cursor, text.length);
  return out;
}
