// Steps in the file format of docs/runs.md ("Test cases: the step format") <-> testrun.catalog.v1.Step.
//
// The two shapes differ (see the comment at the top of proto/testrun/catalog/v1/step.proto): in the
// file, a step's `http` object holds the request fields and `expect` / `save` sit beside `http`; in
// the proto they are HttpStep.request, HttpStep.expect and HttpStep.save. A single expected
// `status` number is a list of one. This module checks the shape (types, unknown fields, required
// fields) and converts; the catalog validates the values (methods, paths, ranges, counts).
// A browser step is `{ name, browser: {...} }` instead (browser-steps.ts: BrowserStep's proto JSON).
// stepToFile writes the other way; stepFromFile(stepToFile(step)) equals the step.
import { create, fromJson, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  type HttpExpectation,
  HttpExpectationSchema,
  type HttpRequest,
  HttpRequestSchema,
  type HttpStep,
  type Step,
  StepSchema,
} from "@testrun/gen/testrun/catalog/v1/step_pb";
import { browserStepFromFile, browserStepToFile } from "./browser-steps.js";
import {
  child,
  InputError,
  int32,
  item,
  type JsonValue,
  json,
  list,
  object,
  string,
  stringList,
  stringMap,
} from "./input.js";

const stepFields = ["name", "http", "expect", "save", "browser"] as const;
const httpFields = ["method", "path", "headers", "query", "json", "raw", "timeoutMs"] as const;
const expectFields = [
  "status",
  "headers",
  "bodyContains",
  "bodyNotContains",
  "json",
  "maxDurationMs",
] as const;

/** Converts a test case's `steps` list; `path` is where the list sits in the document. */
export function stepsFromFile(value: unknown, path: string): Step[] {
  return list(value, path).map((step, index) => stepFromFile(step, item(path, index)));
}

/** Converts one step of the file format; errors name the field by its path in the document. */
export function stepFromFile(value: unknown, path: string): Step {
  const step = object(value, path, stepFields);
  const name = string(step.name, child(path, "name"));
  if (step.browser !== undefined) {
    if (step.http !== undefined)
      throw new InputError(
        child(path, "browser"),
        'cannot be set together with "http": a step is either a request or a browser action',
      );
    if (step.expect !== undefined)
      throw new InputError(
        child(path, "expect"),
        "belongs to HTTP steps: a browser step checks the page with browser.expect",
      );
    if (step.save !== undefined)
      throw new InputError(child(path, "save"), "belongs to HTTP steps: a browser step saves no values");
    return create(StepSchema, {
      name,
      kind: { case: "browser", value: browserStepFromFile(step.browser, child(path, "browser")) },
    });
  }
  if (step.http === undefined)
    throw new InputError(path, "needs http (a request to send) or browser (an action on the test's page)");
  return create(StepSchema, {
    name,
    kind: {
      case: "http",
      value: {
        request: requestFromFile(step.http, child(path, "http")),
        expect:
          step.expect === undefined ? undefined : expectationFromFile(step.expect, child(path, "expect")),
        save: step.save === undefined ? {} : stringMap(step.save, child(path, "save")),
      },
    },
  });
}

function requestFromFile(value: unknown, path: string): HttpRequest {
  const http = object(value, path, httpFields);
  if (http.method === undefined) throw new InputError(child(path, "method"), "is required");
  if (http.path === undefined) throw new InputError(child(path, "path"), "is required");
  if (http.json !== undefined && http.raw !== undefined) {
    throw new InputError(child(path, "raw"), 'cannot be set together with "json": a request has one body');
  }
  let body: HttpRequest["body"] = { case: undefined };
  // `json: null` is a body too: the JSON text null.
  if (http.json !== undefined) {
    body = { case: "json", value: fromJson(ValueSchema, json(http.json, child(path, "json"))) };
  } else if (http.raw !== undefined) {
    body = { case: "raw", value: string(http.raw, child(path, "raw")) };
  }
  return create(HttpRequestSchema, {
    method: string(http.method, child(path, "method")),
    path: string(http.path, child(path, "path")),
    headers: http.headers === undefined ? {} : stringMap(http.headers, child(path, "headers")),
    query: http.query === undefined ? {} : stringMap(http.query, child(path, "query")),
    body,
    timeoutMs: http.timeoutMs === undefined ? 0 : int32(http.timeoutMs, child(path, "timeoutMs")),
  });
}

function expectationFromFile(value: unknown, path: string): HttpExpectation {
  const expect = object(value, path, expectFields);
  const status = expect.status;
  const jsonChecks = expect.json === undefined ? {} : object(expect.json, child(path, "json"));
  return create(HttpExpectationSchema, {
    status:
      status === undefined
        ? []
        : Array.isArray(status)
          ? status.map((code, index) => int32(code, item(child(path, "status"), index)))
          : [int32(status, child(path, "status"))],
    headers: expect.headers === undefined ? {} : stringMap(expect.headers, child(path, "headers")),
    bodyContains: optionalList(expect.bodyContains, child(path, "bodyContains")),
    bodyNotContains: optionalList(expect.bodyNotContains, child(path, "bodyNotContains")),
    json: Object.fromEntries(
      Object.entries(jsonChecks).map(([jsonPath, expected]) => [
        jsonPath,
        fromJson(ValueSchema, json(expected, child(child(path, "json"), jsonPath))),
      ]),
    ),
    maxDurationMs:
      expect.maxDurationMs === undefined ? 0 : int32(expect.maxDurationMs, child(path, "maxDurationMs")),
  });
}

const optionalList = (value: unknown, path: string) => (value === undefined ? [] : stringList(value, path));

/**
 * A field path as the catalog names it in a FieldViolation (proto field names, e.g.
 * `steps[1].http.request.timeout_ms`), rewritten into the file's terms (`steps[1].http.timeoutMs`),
 * so the operator can find the field in the file.
 */
export function fileFieldPath(protoPath: string): string {
  return protoPath
    .replace(/\.http\.request(?=\.|\[|$)/g, ".http")
    .replace(/\.http\.(expect|save)(?=\.|\[|$)/g, ".$1")
    .replace(
      /(^|\.)([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?=\.|\[|$)/g,
      (_, dot: string, name: string) =>
        dot + name.replace(/_([a-z0-9])/g, (__, letter: string) => letter.toUpperCase()),
    );
}

/**
 * One step in the file format, leaving out what holds its default (no headers, timeout 0), so a
 * written file reads like a hand-written one. A single expected status is written as a number.
 */
export function stepToFile(step: Step): { [key: string]: JsonValue } {
  const written: { [key: string]: JsonValue } = { name: step.name };
  if (step.kind.case === "http") {
    const { request, expect, save } = step.kind.value;
    if (request) written.http = requestToFile(request);
    if (expect) written.expect = expectationToFile(expect);
    if (Object.keys(save).length > 0) written.save = { ...save };
  } else if (step.kind.case === "browser") written.browser = browserStepToFile(step.kind.value);
  return written;
}

function requestToFile(request: HttpRequest): { [key: string]: JsonValue } {
  const written = withoutDefaults({
    method: request.method,
    path: request.path,
    headers: request.headers,
    query: request.query,
    raw: request.body.case === "raw" ? request.body.value : undefined,
    timeoutMs: request.timeoutMs,
  });
  // A JSON body is kept whatever it holds: `{}`, `[]`, `0` and `null` are bodies too.
  if (request.body.case === "json") written.json = toJson(ValueSchema, request.body.value) as JsonValue;
  return written;
}

function expectationToFile(expect: HttpExpectation): { [key: string]: JsonValue } {
  const jsonChecks = Object.entries(expect.json).map(([jsonPath, value]) => [
    jsonPath,
    toJson(ValueSchema, value) as JsonValue,
  ]);
  return withoutDefaults({
    status: expect.status.length === 1 ? (expect.status[0] as number) : expect.status,
    headers: expect.headers,
    bodyContains: expect.bodyContains,
    bodyNotContains: expect.bodyNotContains,
    json: Object.fromEntries(jsonChecks),
    maxDurationMs: expect.maxDurationMs,
  });
}

/** Drops the fields a reader takes as their default when absent: 0, empty lists and empty objects. */
function withoutDefaults(fields: { [key: string]: JsonValue | undefined }): { [key: string]: JsonValue } {
  const kept: { [key: string]: JsonValue } = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || value === 0) continue;
    if (Array.isArray(value) ? value.length === 0 : isEmptyObject(value)) continue;
    kept[key] = value;
  }
  return kept;
}

const isEmptyObject = (value: JsonValue) =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;

/** The step's HTTP part, or undefined for a step of another kind. */
export function httpStepOf(step: Step | undefined): HttpStep | undefined {
  return step?.kind.case === "http" ? step.kind.value : undefined;
}
