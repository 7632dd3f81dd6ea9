// `@testrun/testing/redaction-encodings`: the forms a target sends a variable's value back in, each
// made by the encoder a target would use (Node's own, not the redaction module's), for the
// executor's redaction tests and the whole-system one (test/redaction.e2e.test.ts).

import { fragmentLength } from "@testrun/executor/redaction";

/** A value with what each encoding treats specially: space, @ / + " < & > ' ! ~ * ( ), 2- and 3-byte UTF-8. */
export const secret = `s3cr€t p@ss/wörd+"<&>'!~*()`;

const jsonEscaped = (value: string) => JSON.stringify(value).slice(1, -1);
const unicodeEscaped = (text: string, upper = false) =>
  text.replace(/[\u007f-\uffff]/g, (c) => {
    const hex = c.charCodeAt(0).toString(16).padStart(4, "0");
    return `\\u${upper ? hex.toUpperCase() : hex}`;
  });
const htmlEscaped = (value: string, apos: string) =>
  value
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", apos);
export const base64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const base64url = (text: string) => Buffer.from(text, "utf8").toString("base64url");

/** The forms a target sends a value back in, each made by the encoder a target would use. */
export const echoes: Record<string, (value: string) => string> = {
  raw: (v) => v,
  "JSON string (JSON.stringify)": jsonEscaped,
  "JSON string, non-ASCII as \\uxxxx (Python json.dumps)": (v) => unicodeEscaped(jsonEscaped(v)),
  "JSON string, \\uXXXX upper-case (Jackson)": (v) => unicodeEscaped(jsonEscaped(v), true),
  "JSON string, / as \\/ (PHP json_encode)": (v) => unicodeEscaped(jsonEscaped(v)).replaceAll("/", "\\/"),
  "JSON string, < > & as \\u003c (Go encoding/json)": (v) =>
    jsonEscaped(v).replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`),
  "JSON string, HTML-safe, \\u0022 for a quote (.NET System.Text.Json)": (v) =>
    // Character by character as its default encoder writes them: \\ for a backslash, \uXXXX of
    // each UTF-16 unit (upper-case) for " ' + < > & ` and everything outside printable ASCII.
    [...v]
      .map((c) => {
        if (c === "\\") return "\\\\";
        if (!"\"'+<>&`".includes(c) && c >= " " && c <= "~") return c;
        return [...c.split("")]
          .map((unit) => `\\u${unit.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`)
          .join("");
      })
      .join(""),
  "form encoding (URLSearchParams, + for space)": (v) => new URLSearchParams({ v }).toString().slice(2),
  "encodeURIComponent with + for space": (v) => encodeURIComponent(v).replaceAll("%20", "+"),
  encodeURIComponent: encodeURIComponent,
  encodeURI: encodeURI,
  "a URL's path (new URL)": (v) => new URL(`http://target.example/${v}`).pathname.slice(1),
  "a URL's query (new URL)": (v) => new URL(`http://target.example/?${v}`).search.slice(1),
  "percent-encoding in lower-case hex": (v) =>
    encodeURIComponent(v).replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()),
  "HTML, ' as &#39;": (v) => htmlEscaped(v, "&#39;"),
  "HTML, ' as &#x27;": (v) => htmlEscaped(v, "&#x27;"),
  "HTML text (only & < >)": (v) => v.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;"),
  base64,
  "base64 without padding": (v) => base64(v).replace(/=+$/, ""),
  base64url,
  "Basic credential, user at offset 0 (ab:)": (v) => `Basic ${base64(`ab:${v}`)}`,
  "Basic credential, user at offset 1 (abc:)": (v) => `Basic ${base64(`abc:${v}`)}`,
  "Basic credential, user at offset 2 (a:)": (v) => `Basic ${base64(`a:${v}`)}`,
  "base64url of a JSON payload (a JWT's claims)": (v) => base64url(JSON.stringify({ sub: v, iat: 1 })),
};

/** Every run of `fragmentLength` characters of a value: none may be left in a summary. */
export const fragments = (value: string) =>
  Array.from({ length: value.length - fragmentLength + 1 }, (_, i) => value.slice(i, i + fragmentLength));

/** `secret` with each ASCII letter and digit changed, the rest in place: encoded, the same shape. */
const decoy = secret.replace(/[a-z0-9]/gi, (c) =>
  c === "z" ? "a" : c === "9" ? "0" : String.fromCharCode(c.charCodeAt(0) + 1),
);

const windows = (text: string) =>
  new Set(Array.from({ length: Math.max(0, text.length - 7) }, (_, i) => text.slice(i, i + 8)));

/**
 * Every 8 characters in a row of an encoding of `secret` that depend on the secret: those also in
 * the same encoding of a decoy of the same shape ("Basic ", a JSON payload's keys, "%E2%82%AC")
 * are not. A summary holding one, even clipped, leaks.
 */
export function secretWindows(encode: (value: string) => string): string[] {
  const common = windows(encode(decoy));
  return [...windows(encode(secret))].filter((window) => !common.has(window));
}
