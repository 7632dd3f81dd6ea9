// The HTTP kind of step in the editor (proto/testrun/catalog/v1/step.proto, HttpStep): the form's
// draft, reading it from a Step and writing it back without losing anything the form shows.
import { create, fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import { type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  HttpExpectationSchema,
  type HttpRequest,
  HttpRequestSchema,
  HttpStepSchema,
  type Step,
} from "@testrun/gen/testrun/catalog/v1/step_pb";
import { addMessage, type FieldMessages, type Pair, rowField, type StepKindLogic } from "./model.js";

/** The bounds of step.proto the form shows where a person reaches them. */
export const httpBounds = {
  /** Headers, query parameters, saved values, header checks, texts, JSON checks: each. */
  entries: 50,
  statuses: 20,
  rawBodyBytes: 1024 * 1024,
  ms: 120_000,
  pathCharacters: 2048,
} as const;

export const methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

/** What the form holds of an HTTP step: texts as typed. */
export interface HttpDraft {
  method: string;
  path: string;
  query: Pair[];
  headers: Pair[];
  /** Which body is sent; the texts of the others are kept while editing, not sent. */
  body: "none" | "json" | "raw";
  /** The JSON body as text. */
  json: string;
  raw: string;
  /** Milliseconds as typed; empty means the default (10000). */
  timeoutMs: string;
  expect: {
    /**
     * The step carries an expectation even when none of its checks is set (`expect: {}` in the
     * file): kept so that the JSON view gives back what was written.
     */
    given: boolean;
    /** Status codes as typed: "200, 201"; empty means any 2xx. */
    status: string;
    headers: Pair[];
    bodyContains: string[];
    bodyNotContains: string[];
    /** JSON path -> the expected value as JSON text. */
    json: Pair[];
    /** Milliseconds as typed; empty means no limit. */
    maxDurationMs: string;
  };
  /** Name -> JSON path into the response body. */
  save: Pair[];
}

const emptyExpect = (): HttpDraft["expect"] => ({
  given: false,
  status: "",
  headers: [],
  bodyContains: [],
  bodyNotContains: [],
  json: [],
  maxDurationMs: "",
});

const pairsOf = (map: Record<string, string>): Pair[] =>
  Object.entries(map).map(([name, value]) => ({ name, value }));

/** A JSON value as the form shows it: on one line when short, else indented. */
export function jsonText(value: JsonValue, indent = true): string {
  const oneLine = JSON.stringify(value);
  return indent && oneLine.length > 60 ? JSON.stringify(value, null, 2) : oneLine;
}

const msText = (ms: number) => (ms === 0 ? "" : String(ms));

/** Parses a JSON text; the parser's message (with its position) when it is not JSON. */
export function parseJson(text: string): { ok: true; value: JsonValue } | { ok: false; problem: string } {
  try {
    return { ok: true, value: JSON.parse(text) as JsonValue };
  } catch (error) {
    return { ok: false, problem: error instanceof Error ? error.message : String(error) };
  }
}

/** Status codes as typed ("200, 201" or "200 201"): the numbers, or what is not one. */
export function parseStatuses(text: string): { codes: number[]; bad?: string } {
  const parts = text.split(/[\s,]+/).filter((part) => part !== "");
  const bad = parts.find((part) => !/^\d{1,9}$/.test(part));
  return bad === undefined ? { codes: parts.map(Number) } : { codes: [], bad };
}

/** Milliseconds as typed: "" is 0. */
function parseMs(text: string, field: string, problems: FieldMessages): number {
  const trimmed = text.trim();
  if (trimmed === "") return 0;
  if (!/^\d+$/.test(trimmed)) {
    addMessage(problems, field, "Must be a whole number of milliseconds, e.g. 5000.");
    return 0;
  }
  const ms = Number(trimmed);
  if (ms > 2_147_483_647) {
    addMessage(problems, field, `Must be at most ${httpBounds.ms}.`);
    return 0;
  }
  return ms;
}

/**
 * Rows as a map; two rows of one name (for headers, ignoring letter case as HTTP does) cannot
 * both be kept, so that is a problem at the second one rather than a silent loss.
 */
function mapOf(
  rows: Pair[],
  field: string,
  problems: FieldMessages,
  what: string,
  ignoreCase = false,
): Record<string, string> {
  const map: Record<string, string> = {};
  const seen = new Map<string, number>();
  rows.forEach((row, index) => {
    const key = ignoreCase ? row.name.toLowerCase() : row.name;
    const first = seen.get(key);
    if (first !== undefined) {
      const name = row.name === "" ? "without a name" : `“${row.name}”`;
      addMessage(
        problems,
        rowField(field, index),
        `${what} ${first + 1} is ${name} too${ignoreCase ? " (names ignore letter case)" : ""}: rename or remove one.`,
      );
      return;
    }
    seen.set(key, index);
    map[row.name] = row.value;
  });
  return map;
}

function fromStep(kind: Step["kind"]): HttpDraft | undefined {
  if (kind.case !== "http") return undefined;
  const { request, expect, save } = kind.value;
  const body = request?.body;
  return {
    method: request?.method ?? "GET",
    path: request?.path ?? "",
    query: pairsOf(request?.query ?? {}),
    headers: pairsOf(request?.headers ?? {}),
    body: body?.case ?? "none",
    json: body?.case === "json" ? jsonText(toJson(ValueSchema, body.value)) : "",
    raw: body?.case === "raw" ? body.value : "",
    timeoutMs: msText(request?.timeoutMs ?? 0),
    expect: expect
      ? {
          given: true,
          status: expect.status.join(", "),
          headers: pairsOf(expect.headers),
          bodyContains: [...expect.bodyContains],
          bodyNotContains: [...expect.bodyNotContains],
          json: Object.entries(expect.json).map(([path, value]) => ({
            name: path,
            value: jsonText(toJson(ValueSchema, value), false),
          })),
          maxDurationMs: msText(expect.maxDurationMs),
        }
      : emptyExpect(),
    save: pairsOf(save),
  };
}

function toStep(draft: HttpDraft, problems: FieldMessages, at: (name: string) => string): Step["kind"] {
  let body: HttpRequest["body"] = { case: undefined };
  if (draft.body === "raw") body = { case: "raw", value: draft.raw };
  if (draft.body === "json") {
    const parsed = parseJson(draft.json);
    if (draft.json.trim() === "")
      addMessage(problems, at("request.json"), "Enter a JSON value, or choose another body.");
    else if (!parsed.ok) addMessage(problems, at("request.json"), `Not valid JSON: ${parsed.problem}.`);
    else body = { case: "json", value: fromJson(ValueSchema, parsed.value) };
  }
  const request = create(HttpRequestSchema, {
    method: draft.method,
    path: draft.path,
    query: mapOf(draft.query, at("request.query"), problems, "Parameter"),
    headers: mapOf(draft.headers, at("request.headers"), problems, "Header", true),
    body,
    timeoutMs: parseMs(draft.timeoutMs, at("request.timeoutMs"), problems),
  });

  const e = draft.expect;
  const statuses = parseStatuses(e.status);
  if (statuses.bad !== undefined)
    addMessage(
      problems,
      at("expect.status"),
      `“${statuses.bad}” is not a status code: write numbers separated by commas, e.g. 200, 201.`,
    );
  const json: Record<string, Value> = {};
  const seenPaths = new Map<string, number>();
  e.json.forEach((row, index) => {
    const field = rowField(at("expect.json"), index);
    const first = seenPaths.get(row.name);
    if (first !== undefined) {
      addMessage(problems, field, `Check ${first + 1} has this path too: rename or remove one.`);
      return;
    }
    seenPaths.set(row.name, index);
    const parsed = parseJson(row.value);
    if (row.value.trim() === "")
      addMessage(problems, field, 'Enter the value expected there as JSON: true, 42, "text"…');
    else if (!parsed.ok)
      addMessage(
        problems,
        field,
        `The expected value is not JSON (${parsed.problem}): write text in double quotes, e.g. "ok".`,
      );
    else json[row.name] = fromJson(ValueSchema, parsed.value);
  });
  const expectation = create(HttpExpectationSchema, {
    status: statuses.codes,
    headers: mapOf(e.headers, at("expect.headers"), problems, "Header check", true),
    bodyContains: [...e.bodyContains],
    bodyNotContains: [...e.bodyNotContains],
    json,
    maxDurationMs: parseMs(e.maxDurationMs, at("expect.maxDurationMs"), problems),
  });
  const hasChecks =
    expectation.status.length > 0 ||
    Object.keys(expectation.headers).length > 0 ||
    expectation.bodyContains.length > 0 ||
    expectation.bodyNotContains.length > 0 ||
    e.json.length > 0 ||
    expectation.maxDurationMs > 0;
  return {
    case: "http",
    value: create(HttpStepSchema, {
      request,
      expect: e.given || hasChecks ? expectation : undefined,
      save: mapOf(draft.save, at("save"), problems, "Saved value"),
    }),
  };
}

function summary(draft: HttpDraft): string {
  const parts = [`${draft.method} ${draft.path || "(no path)"}`];
  const statuses = parseStatuses(draft.expect.status).codes;
  parts.push(statuses.length === 0 ? "expects 2xx" : `expects ${statuses.join(" or ")}`);
  const saved = draft.save.map((row) => row.name).filter(Boolean);
  if (saved.length > 0) parts.push(`saves ${saved.join(", ")}`);
  return parts.join(" · ");
}

/** Every string inside a JSON text (values, not keys: the executor interpolates values only). */
function stringsInJson(text: string): string[] {
  const parsed = parseJson(text);
  if (!parsed.ok) return [];
  const found: string[] = [];
  const walk = (value: JsonValue) => {
    if (typeof value === "string") found.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === "object") Object.values(value).forEach(walk);
  };
  walk(parsed.value);
  return found;
}

/** What the executor interpolates (services/executor/src/steps/http.ts): values, never names or paths. */
function interpolated(draft: HttpDraft): { field: string; text: string }[] {
  const texts: { field: string; text: string }[] = [{ field: "request.path", text: draft.path }];
  const rows = (field: string, pairs: Pair[]) =>
    pairs.forEach((row, index) => {
      texts.push({ field: rowField(field, index), text: row.value });
    });
  rows("request.query", draft.query);
  rows("request.headers", draft.headers);
  if (draft.body === "raw") texts.push({ field: "request.raw", text: draft.raw });
  if (draft.body === "json")
    for (const text of stringsInJson(draft.json)) texts.push({ field: "request.json", text });
  rows("expect.headers", draft.expect.headers);
  draft.expect.bodyContains.forEach((text, index) => {
    texts.push({ field: rowField("expect.bodyContains", index), text });
  });
  draft.expect.bodyNotContains.forEach((text, index) => {
    texts.push({ field: rowField("expect.bodyNotContains", index), text });
  });
  draft.expect.json.forEach((row, index) => {
    for (const text of stringsInJson(row.value)) texts.push({ field: rowField("expect.json", index), text });
  });
  return texts;
}

/** Fields of the catalog's paths (proto names) -> the form's, and the rows each map's entries are. */
const requestFields: Record<string, string> = {
  method: "request.method",
  path: "request.path",
  json: "request.json",
  raw: "request.raw",
  timeout_ms: "request.timeoutMs",
};
const expectFields: Record<string, string> = {
  status: "expect.status",
  body_contains: "expect.bodyContains",
  body_not_contains: "expect.bodyNotContains",
  max_duration_ms: "expect.maxDurationMs",
};
const mapFields: Record<string, (draft: HttpDraft) => Pair[]> = {
  "request.headers": (draft) => draft.headers,
  "request.query": (draft) => draft.query,
  "expect.headers": (draft) => draft.expect.headers,
  "expect.json": (draft) => draft.expect.json,
  save: (draft) => draft.save,
};

/** `.request.headers["X-Id"]` -> the field `request.headers`, the key `X-Id`; `[2]` -> the index. */
function splitPath(rest: string): { field: string; key?: string; index?: number } | undefined {
  const match = /^\.(request|expect|save)(?:\.([a-z_]+))?(?:\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\])?$/.exec(rest);
  if (!match) return undefined;
  const [, part, name, index, key] = match;
  const field = part === "save" ? "save" : `${part}.${name ?? ""}`;
  if (part === "save" && name !== undefined) return undefined;
  return {
    field,
    ...(index !== undefined && { index: Number(index) }),
    ...(key !== undefined && { key: JSON.parse(key) as string }),
  };
}

function fieldOf(rest: string, draft: HttpDraft): { field: string; prefix?: string } | undefined {
  // The step has no request at all: only a JSON view could do that, and the method comes first.
  if (rest === "" || rest === ".request") return { field: "request.method" };
  const path = splitPath(rest);
  if (!path) return undefined;
  const rows = mapFields[path.field];
  if (rows) {
    if (path.key === undefined) return { field: path.field };
    const index = rows(draft).findIndex((row) => row.name === path.key);
    return index < 0
      ? { field: path.field, prefix: `“${path.key}”: ` }
      : { field: rowField(path.field, index) };
  }
  const [part, name = ""] = path.field.split(".");
  const field = (part === "request" ? requestFields : expectFields)[name];
  if (!field) return undefined;
  if (field === "expect.status" && path.index !== undefined) {
    const code = parseStatuses(draft.expect.status).codes[path.index];
    return { field, ...(code !== undefined && { prefix: `“${code}”: ` }) };
  }
  return { field };
}

/** `request.path` -> draft.path, `expect.status` -> draft.expect.status, `save#2` -> draft.save[2]. */
function valueAt(field: string, draft: HttpDraft): unknown {
  const [place = "", row] = field.split("#");
  const [part, name = ""] = place.split(".");
  const whole =
    part === "save"
      ? draft.save
      : part === "request" && name in draft
        ? draft[name as keyof HttpDraft]
        : part === "expect" && name in draft.expect
          ? draft.expect[name as keyof HttpDraft["expect"]]
          : undefined;
  return row === undefined ? whole : Array.isArray(whole) ? whole[Number(row)] : undefined;
}

export const httpStep: StepKindLogic<HttpDraft> = {
  label: "HTTP request",
  empty: () => ({
    method: "GET",
    path: "/",
    query: [],
    headers: [],
    body: "none",
    json: "",
    raw: "",
    timeoutMs: "",
    expect: emptyExpect(),
    save: [],
  }),
  fromStep,
  toStep,
  summary,
  interpolated,
  saves: (draft) => draft.save.map((row) => row.name),
  fieldOf,
  valueAt,
};
