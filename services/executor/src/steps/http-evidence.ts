// What a failed HTTP step keeps of the response it got (the `http-response` artifact, JSON): the
// request line, the status, the response's headers (values only of those in an allow-list), the
// beginning of its body and the request's timing, every variable's value replaced by `{{NAME}}`
// as in the test's summary. The format is in docs/rest-api.md ("Artifacts").
import { StringDecoder } from "node:string_decoder";
import { ArtifactKind } from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { Artifact } from "../browser/artifacts.js";
import type { HttpTimings } from "./http-timing.js";
import type { Variables } from "./variables.js";

/** The most of a response body kept, in bytes of UTF-8 (after redaction). */
export const maxEvidenceBodyBytes = 16 * 1024;

/** Characters of one shown header value kept (a Location or a CSP can be long). */
export const maxHeaderValueLength = 1000;

/**
 * Response headers whose values are kept: what says what the answer is and why (its type, size,
 * where it points, when to retry, how it is cached, which credentials it wants, which request it
 * was in the target's logs). Any other header is named without its value: cookies, tokens and the
 * target's own headers can hold anything. docs/security.md ("Redaction") lists them.
 */
export const shownResponseHeaders: ReadonlySet<string> = new Set([
  "age",
  "allow",
  "cache-control",
  "content-encoding",
  "content-language",
  "content-length",
  "content-range",
  "content-type",
  "date",
  "etag",
  "expires",
  "last-modified",
  "location",
  "proxy-authenticate",
  "ratelimit-limit",
  "ratelimit-remaining",
  "ratelimit-reset",
  "request-id",
  "retry-after",
  "server",
  "traceparent",
  "vary",
  "via",
  "www-authenticate",
  "x-correlation-id",
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "x-request-id",
]);

/** The artifact's content (JSON), as docs/rest-api.md describes it. */
export interface HttpEvidence {
  request: { method: string; url: string };
  status: number;
  statusText: string;
  /** In the order received; `value` only for a header of `shownResponseHeaders`. */
  headers: { name: string; value?: string }[];
  body: {
    /** The body as text, redacted, at most `maxEvidenceBodyBytes`; null when withheld. */
    text: string | null;
    /** `text` is only the body's beginning (the redacted body was longer than it). */
    truncated: boolean;
    /** Bytes of the body read (the whole body when `complete`). */
    receivedBytes: number;
    /** The whole body was read; false when reading stopped at RESPONSE_MAX_BYTES. */
    complete: boolean;
    /** Why `text` is null: the body holds part of a variable's value in a form not recognised. */
    withheld?: string;
    /**
     * Set when `text` is a JSON body written again (2-space indents) from its parsed value: its
     * strings held a value escaped once more (JSON inside a JSON string), which only parsed could
     * be replaced. Sizes are still the response's.
     */
    rewritten?: string;
  };
  timings: HttpTimings;
}

/** What http.ts knows of the exchange once the response was read. */
export interface Exchange {
  method: string;
  url: string;
  status: number;
  statusText: string;
  headers: Iterable<[string, string]>;
  /** What was read of the body, as text. */
  body: string;
  receivedBytes: number;
  /** Reading stopped at the cap before the body's end. */
  truncated: boolean;
  timings: HttpTimings;
}

/** The `http-response` artifact of a failed HTTP step, redacted. */
export function httpEvidence(exchange: Exchange, vars: Variables, step: number): Artifact {
  const evidence: HttpEvidence = {
    request: { method: exchange.method, url: vars.redact(exchange.url) },
    status: exchange.status,
    statusText: guarded(exchange.statusText, vars, 200),
    headers: [...exchange.headers].map(([name, value]) =>
      shownResponseHeaders.has(name)
        ? { name, value: guarded(value, vars, maxHeaderValueLength) }
        : { name: vars.redact(name) },
    ),
    body: evidenceBody(exchange, vars),
    timings: exchange.timings,
  };
  return {
    kind: ArtifactKind.HTTP_RESPONSE,
    name: "http-response",
    contentType: "application/json",
    content: Buffer.from(JSON.stringify(evidence, null, 2), "utf8"),
    step,
  };
}

/**
 * A value from the target: redacted first (a form of a value cut short is no longer recognised),
 * then cut, then checked for fragments of a value no form covered, as a summary's "got" is.
 */
function guarded(text: string, vars: Variables, max: number): string {
  const redacted = vars.redact(text);
  const cut = redacted.length > max ? `${redacted.slice(0, max - 1)}…` : redacted;
  return vars.guardActual(cut);
}

function evidenceBody(exchange: Exchange, vars: Variables): HttpEvidence["body"] {
  const sizes = { receivedBytes: exchange.receivedBytes, complete: !exchange.truncated };
  const raw = cutBody(vars.redact(exchange.body));
  if (!vars.holdsFragment(raw.text)) return { ...raw, ...sizes };
  // A JSON body whose strings hold a value escaped once more (a JSON text inside a JSON string):
  // its strings are redacted as parsed, as a summary quotes them, and the body written again.
  const json = exchange.truncated ? undefined : parseJson(exchange.body);
  if (json !== undefined) {
    const rewritten = cutBody(vars.redact(JSON.stringify(vars.redactValue(json.value), null, 2)));
    if (!vars.holdsFragment(rewritten.text))
      return {
        ...rewritten,
        ...sizes,
        rewritten:
          "the JSON body written again from its parsed value, to replace values escaped inside its strings",
      };
  }
  return {
    text: null,
    truncated: raw.truncated,
    ...sizes,
    withheld: "the body holds part of a variable's value in a form that could not be replaced",
  };
}

/**
 * A redacted body's first `maxEvidenceBodyBytes` (the whole of what was read was redacted before
 * the cut, for the reason `guarded` gives); a character the limit cuts through is left out whole.
 */
function cutBody(redacted: string): { text: string; truncated: boolean } {
  const bytes = Buffer.from(redacted, "utf8");
  const truncated = bytes.byteLength > maxEvidenceBodyBytes;
  return { text: new StringDecoder("utf8").write(bytes.subarray(0, maxEvidenceBodyBytes)), truncated };
}

function parseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}
