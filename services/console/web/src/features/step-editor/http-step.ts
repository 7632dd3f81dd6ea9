// The HTTP kind of step in the editor (proto/testrun/catalog/v1/step.proto, HttpStep): the form's
// draft, reading it from a Step and writing it back without losing anything the form shows (its
// texts in http-text.ts; where the catalog's messages belong in http-paths.ts; the draft's shape in
// http-draft.ts).
import { create, fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import { type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import { httpMethods, httpStepBounds } from "@testrun/content-file";
import {
  HttpExpectationSchema,
  type HttpRequest,
  HttpRequestSchema,
  HttpStepSchema,
  type Step,
} from "@testrun/gen/testrun/catalog/v1/step_pb";
import type { HttpDraft } from "./http-draft.js";
import { fieldOf, valueAt } from "./http-paths.js";
import { jsonText, mapOf, msText, pairsOf, parseJson, parseMs, parseStatuses } from "./http-text.js";
import { addMessage, type FieldMessages, type Pair, rowField, type StepKindLogic } from "./model.js";

/** The bounds of step.proto the form shows where a person reaches them: the catalog's own. */
export const httpBounds = httpStepBounds;

export const methods = httpMethods;

export type { HttpDraft };

const emptyExpect = (): HttpDraft["expect"] => ({
  given: false,
  status: "",
  headers: [],
  bodyContains: [],
  bodyNotContains: [],
  json: [],
  maxDurationMs: "",
});

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
