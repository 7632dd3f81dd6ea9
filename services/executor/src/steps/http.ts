// The HTTP step kind: one request against the environment, checks on its response, values saved
// from its body for later steps.
import { type JsonValue, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { HttpExpectation, HttpRequest } from "@testrun/gen/testrun/catalog/v1/step_pb";
// undici's, like the fetch of the egress guard that sends them.
import { Headers } from "undici";
import { httpEvidence } from "./http-evidence.js";
import { type HttpTimings, RequestTimer } from "./http-timing.js";
import { evaluateJsonPath, JsonPathError } from "./json-path.js";
import type { StepContext, StepKind, StepOf } from "./kind.js";
import { StepFailure, type StepFailureCause, type Variables } from "./variables.js";
import { clip, own, type Said, say, sizeText } from "./wording.js";

export const defaultTimeoutMs = 10_000;
/**
 * How much of a response body a step reads (RESPONSE_MAX_BYTES): the rest is not read, and the
 * connection is closed, so a huge answer costs an executor at most this much memory.
 */
export const defaultMaxBodyBytes = 1024 * 1024;

interface Response_ {
  method: string;
  url: string;
  status: number;
  statusText: string;
  headers: Headers;
  /** The body, or its first `maxBodyBytes` when `truncated`. */
  body: string;
  /** The response was longer than the cap: `body` is only its beginning. */
  truncated: boolean;
  /** Bytes of the body read (at most the cap). */
  receivedBytes: number;
  durationMs: number;
  timings: HttpTimings;
}

/** What a summary adds when checks saw only the beginning of a body. */
const truncatedNote = (cap: number) =>
  say`response larger than ${own(sizeText(cap))}; checked its first ${own(sizeText(cap))}`;

export const httpStepKind: StepKind<"http"> = {
  async run(step, ctx) {
    if (!step.request) throw new StepFailure(say`no request`);
    const cap = ctx.maxBodyBytes ?? defaultMaxBodyBytes;
    const response = await send(step.request, ctx, cap);
    try {
      checkAndSave(step, response, ctx.vars, cap);
    } catch (error) {
      // The response a failed step got is kept with the result, redacted (http-evidence.ts).
      if (error instanceof StepFailure) ctx.keep?.(httpEvidence(response, ctx.vars, ctx.step));
      throw error;
    }
  },
};

function checkAndSave(step: StepOf<"http">, response: Response_, vars: Variables, cap: number): void {
  const json = lazyJson(response.body);
  check(step.expect, response, json, vars, cap);
  for (const [name, path] of Object.entries(step.save)) {
    if (response.truncated)
      throw new StepFailure(say`cannot save ${name}: ${truncatedNote(cap)}, and JSON needs the whole body`);
    const body = json();
    if (!body.ok) throw new StepFailure(say`cannot save ${name}: the body is not JSON`);
    const match = evaluate(body.value, path);
    if (!match.found) throw new StepFailure(say`cannot save ${name}: ${path} matched nothing`);
    vars.save(name, typeof match.value === "string" ? match.value : JSON.stringify(match.value));
  }
}

async function send(request: HttpRequest, ctx: StepContext, cap: number): Promise<Response_> {
  const { vars } = ctx;
  let url: URL;
  try {
    url = new URL(`${ctx.baseUrl}${vars.interpolate(request.path)}`);
  } catch (error) {
    if (error instanceof StepFailure) throw error;
    throw new StepFailure(say`invalid URL ${ctx.baseUrl}${request.path}`);
  }
  for (const [name, value] of Object.entries(request.query))
    url.searchParams.append(name, vars.interpolate(value));
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) headers.set(name, vars.interpolate(value));

  let body: string | undefined;
  if (request.body.case === "json") {
    body = JSON.stringify(interpolateJson(toJson(ValueSchema, request.body.value), vars));
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  } else if (request.body.case === "raw") {
    body = vars.interpolate(request.body.value);
  }

  const timeoutMs = request.timeoutMs > 0 ? request.timeoutMs : defaultTimeoutMs;
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
  const started = performance.now();
  const timer = new RequestTimer();
  try {
    // Redirects are not followed: a step checks what the environment answered, 3xx included.
    // Through the egress guard: a host the executors may not reach fails as an unknown one.
    const response = await timer.send(() =>
      ctx.egress.fetch(url, {
        method: request.method,
        headers,
        body,
        signal,
        redirect: "manual",
      }),
    );
    const { text, truncated, retainedBytes } = await readBody(response, cap);
    return {
      method: request.method,
      url: url.href,
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
      body: text,
      truncated,
      receivedBytes: retainedBytes,
      durationMs: Math.round(performance.now() - started),
      timings: timer.timings(),
    };
  } catch (error) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    if (error instanceof StepFailure) throw error;
    if (signal.aborted) throw new StepFailure(say`no response within ${own(timeoutMs)} ms`, "timeout");
    throw new StepFailure(say`request failed: ${fetchFailure(error)}`, fetchFailureCause(error));
  }
}

export interface BodyRead {
  /** The body as text, or its first `cap` bytes (a character cut at the cap becomes U+FFFD). */
  text: string;
  truncated: boolean;
  /** Bytes kept: never more than the cap. */
  retainedBytes: number;
}

/**
 * Reads at most `cap` bytes of a response body as it streams in, then cancels the rest: the
 * connection is closed instead of being drained or left open, and nothing past the cap is kept.
 */
export async function readBody(
  response: { body: ReadableStream<Uint8Array> | null },
  cap: number,
): Promise<BodyRead> {
  if (!response.body) return { text: "", truncated: false, retainedBytes: 0 };
  const reader = response.body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    while (!truncated) {
      const { done, value } = await reader.read();
      if (done) break;
      const take = Math.min(value.byteLength, cap - size);
      // A copy of what is kept, so a chunk's larger underlying buffer is not held on to.
      if (take > 0) chunks.push(Buffer.from(value.subarray(0, take)));
      size += take;
      if (take < value.byteLength) truncated = true;
    }
  } finally {
    if (truncated) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  return { text: Buffer.concat(chunks).toString("utf8"), truncated, retainedBytes: size };
}

/**
 * What a step or the reachability check says when no connection could be made: one message for an
 * unknown host, a refused or timed-out connection, an unreachable network and an address the
 * egress policy refuses, so a failure tells nothing of what lies behind an address.
 */
export const cannotConnect = "could not connect to the host";

/** Connection-stage failures, all reported as `cannotConnect`. */
const connectFailures = new Set([
  "EGRESS_REFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_NODATA",
  "EAI_NONAME",
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** fetch reports network errors as TypeError("fetch failed") with the system error as cause. */
export function describeFetchError(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  // Several addresses tried in turn (IPv4 and IPv6) fail together as one AggregateError.
  const first = cause instanceof AggregateError ? cause.errors[0] : cause;
  const { code, syscall } = (first ?? {}) as { code?: unknown; syscall?: unknown };
  if (typeof code === "string" && connectFailures.has(code)) return cannotConnect;
  // Any other failure to resolve or connect (EHOSTDOWN, EADDRNOTAVAIL, ENETDOWN, EAI_FAIL, …): its
  // message ("connect EHOSTDOWN 10.1.2.3:80") names the address the host resolved to.
  if (syscall === "connect" || syscall === "getaddrinfo") return cannotConnect;
  switch (code) {
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
      return "connection closed by the server";
  }
  if (typeof code === "string" && (code.startsWith("ERR_TLS") || code.includes("CERT"))) return "TLS error";
  if (!(cause instanceof Error)) return "unknown error";
  // A system error (errno code) whatever its stage, should its message name an address.
  const said = first instanceof Error ? first.message : cause.message;
  if (typeof code === "string" && /^E[A-Z_]+$/.test(code) && namesAnAddress(said)) return cannotConnect;
  return cause.message;
}

/** The executor's own phrases among describeFetchError's answers; anything else is an error's message. */
const fetchPhrases = new Set([
  cannotConnect,
  "connection closed by the server",
  "TLS error",
  "unknown error",
]);

/**
 * Why a request got no response, from the error's code: the egress guard's refusal (the summary
 * says "could not connect" as for any address, the cause says which), else the network (DNS, a
 * refused, reset or timed-out connection, TLS).
 */
export function fetchFailureCause(error: unknown): StepFailureCause {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const first = cause instanceof AggregateError ? cause.errors[0] : cause;
  const { code } = (first ?? {}) as { code?: unknown };
  return code === "EGRESS_REFUSED" ? "egress_refused" : "network";
}

/** describeFetchError's answer, its own phrase marked as the executor's (never redacted). */
const fetchFailure = (error: unknown): Said | string => {
  const said = describeFetchError(error);
  return fetchPhrases.has(said) ? own(said) : said;
};

/** Whether a message holds something like an IPv4 address or an IPv6 one (two colons at least). */
const namesAnAddress = (message: string) =>
  /\b\d{1,3}(\.\d{1,3}){3}\b/.test(message) || /[0-9a-f]{0,4}(:[0-9a-f]{0,4}){2,}/i.test(message);

function check(
  expect: HttpExpectation | undefined,
  response: Response_,
  json: () => ParsedBody,
  vars: Variables,
  cap: number,
): void {
  const statuses = expect?.status ?? [];
  const statusOk = statuses.length
    ? statuses.includes(response.status)
    : response.status >= 200 && response.status < 300;
  if (!statusOk) {
    // The statuses a test expects are its settings (the executor's words); the one it got is the target's.
    const wanted = statuses.length ? say`status ${own(orList(statuses.map(String)))}` : say`a 2xx status`;
    throw new StepFailure(say`expected ${wanted}, got ${String(response.status)}`);
  }
  if (!expect) return;
  // What the response holds is redacted before it is quoted (quoting escapes a value, a body that
  // is itself JSON text is escaped twice) and before it is clipped (a clipped value is no longer
  // recognisable).
  const show = (value: unknown) => clip(vars.redact(JSON.stringify(vars.redactValue(value))));
  // What the target sent ("got ..."), checked last for fragments of a value that no known form of
  // it covered (variables.ts guardActual).
  const showActual = (value: unknown) => vars.guardActual(show(value));

  for (const [name, template] of Object.entries(expect.headers)) {
    const actual = response.headers.get(name);
    if (actual === null || !actual.toLowerCase().includes(vars.interpolate(template).toLowerCase())) {
      const got = actual === null ? own("none") : showActual(actual);
      throw new StepFailure(
        say`expected header ${name.toLowerCase()} to contain ${show(template)}, got ${got}`,
      );
    }
  }
  // A truncated body: a text found in its beginning is in the body; a text not found there may
  // still be further on, so neither "contains" nor "does not contain" can pass on it.
  const partly = response.truncated ? say` (${truncatedNote(cap)})` : say``;
  for (const template of expect.bodyContains) {
    if (!response.body.includes(vars.interpolate(template)))
      throw new StepFailure(say`expected the body to contain ${show(template)}${partly}`);
  }
  for (const template of expect.bodyNotContains) {
    if (response.body.includes(vars.interpolate(template)))
      throw new StepFailure(say`expected the body not to contain ${show(template)}${partly}`);
    if (response.truncated)
      throw new StepFailure(
        say`cannot tell that the body does not contain ${show(template)}: ${truncatedNote(cap)}`,
      );
  }
  for (const [path, expectedValue] of Object.entries(expect.json)) {
    const template = toJson(ValueSchema, expectedValue);
    const wanted = say`${path} = ${show(template)}`;
    if (response.truncated)
      throw new StepFailure(
        say`expected ${wanted}, but the ${truncatedNote(cap)}, and JSON needs the whole body`,
      );
    const body = json();
    if (!body.ok) throw new StepFailure(say`expected ${wanted}, but the body is not JSON`);
    const match = evaluate(body.value, path);
    if (!match.found) throw new StepFailure(say`expected ${wanted}, got no match`);
    if (!deepEqual(match.value, interpolateJson(template, vars)))
      throw new StepFailure(say`expected ${wanted}, got ${showActual(match.value)}`);
  }
  if (expect.maxDurationMs > 0 && response.durationMs > expect.maxDurationMs) {
    throw new StepFailure(
      say`expected a response within ${own(expect.maxDurationMs)} ms, took ${String(response.durationMs)} ms`,
    );
  }
}

type ParsedBody = { ok: true; value: unknown } | { ok: false };

function lazyJson(text: string): () => ParsedBody {
  let parsed: ParsedBody | undefined;
  return () => {
    if (!parsed) {
      try {
        parsed = { ok: true, value: JSON.parse(text) };
      } catch {
        parsed = { ok: false };
      }
    }
    return parsed;
  };
}

function evaluate(value: unknown, path: string) {
  try {
    return evaluateJsonPath(value, path);
  } catch (error) {
    if (error instanceof JsonPathError) throw new StepFailure(error.said);
    throw error;
  }
}

/** Interpolates every string inside a JSON value (keys stay as written). */
function interpolateJson(value: JsonValue, vars: Variables): JsonValue {
  if (typeof value === "string") return vars.interpolate(value);
  if (Array.isArray(value)) return value.map((item) => interpolateJson(item, vars));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, interpolateJson(v as JsonValue, vars)]),
    );
  }
  return value;
}

/** Deep equality of parsed JSON; numbers compare numerically (1 equals 1.0). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]))
    );
  }
  if (a && b && typeof a === "object" && typeof b === "object") {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return (
      ka.length === kb.length &&
      ka.every(
        (k) =>
          Object.hasOwn(b, k) &&
          deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
      )
    );
  }
  return false;
}

const orList = (items: string[]) =>
  items.length > 1 ? `${items.slice(0, -1).join(", ")} or ${items.at(-1)}` : (items[0] ?? "");
