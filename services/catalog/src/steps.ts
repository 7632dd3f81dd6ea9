import { clone, fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import { type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import { httpMethods, httpStepBounds } from "@testrun/content-file";
import {
  type HttpExpectation,
  type HttpRequest,
  type HttpStep,
  type Step,
  StepSchema,
} from "@testrun/gen/testrun/catalog/v1/step_pb";
import { checkBrowser } from "./browser-steps.js";
import type { Violations } from "./errors.js";
import { checkMs, checkName, codePoints, hasControlCharacters, variableNamePattern } from "./validate.js";

// Validation of test case steps on write (the rules of proto/testrun/catalog/v1/step.proto; those
// of browser steps in browser-steps.ts), and
// their storage form: each step's canonical proto JSON, so what an executor later runs is exactly
// what was validated.

const methods: readonly string[] = httpMethods;
/** RFC 9110 token characters: what an HTTP header name may hold. */
const headerNamePattern = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Set by the executor from the request itself. */
const executorHeaders = new Set(["host", "content-length"]);
const maxEntries: number = httpStepBounds.entries;
const maxBodyBytes = httpStepBounds.bodyBytes;

/** Map keys and list entries are named like `headers["X-Id"]` and `status[0]`. */
const key = (field: string, name: string) => `${field}[${JSON.stringify(name)}]`;

/**
 * Whether a path is in the JSON path subset executors understand: `$` followed by any of `.name`,
 * `['name']`, `["name"]` and `[index]`, e.g. `$.items[0].id`.
 */
export function isJsonPath(path: string): boolean {
  if (!path.startsWith("$")) return false;
  // `.name` takes letters, digits, _, $ and -; any other key is written ['name'] or ["name"].
  const segment = /^(?:\.[A-Za-z0-9_$-]+|\['[^']*'\]|\["[^"]*"\]|\[\d+\])/;
  let rest = path.slice(1);
  while (rest.length > 0) {
    const match = segment.exec(rest);
    if (!match) return false;
    rest = rest.slice(match[0].length);
  }
  return true;
}

const jsonPathRule = "must be a JSON path like $.items[0].id ($, .name, ['name'], [index])";

/** A google.protobuf.Value as JSON, or undefined when it has no JSON form (unset kind, NaN…). */
function valueToJson(value: Value): JsonValue | undefined {
  try {
    return toJson(ValueSchema, value);
  } catch {
    return undefined;
  }
}

function checkCount(count: number, field: string, violations: Violations, max = maxEntries): void {
  if (count > max) violations.add(field, `must hold at most ${max} entries (got ${count})`);
}

function checkHeaderNames(
  headers: Record<string, string>,
  field: string,
  violations: Violations,
  request: boolean,
): void {
  checkCount(Object.keys(headers).length, field, violations);
  for (const [name, value] of Object.entries(headers)) {
    const at = key(field, name);
    if (!headerNamePattern.test(name)) violations.add(at, "is not a valid HTTP header name");
    else if (request && executorHeaders.has(name.toLowerCase()))
      violations.add(at, `${name} is set by the executor and cannot be given`);
    else if (hasControlCharacters(value))
      violations.add(at, "must not contain line breaks or control characters");
  }
}

function checkRequest(request: HttpRequest, field: string, violations: Violations): void {
  if (!methods.includes(request.method))
    violations.add(`${field}.method`, `must be one of ${methods.join(", ")}`);
  if (!request.path) violations.add(`${field}.path`, "is required");
  else if (!request.path.startsWith("/")) violations.add(`${field}.path`, 'must start with "/"');
  else if (codePoints(request.path) > httpStepBounds.pathCharacters)
    violations.add(`${field}.path`, `must be at most ${httpStepBounds.pathCharacters} characters`);
  else if (/\s/.test(request.path) || hasControlCharacters(request.path))
    violations.add(`${field}.path`, "must not contain spaces or control characters");
  checkHeaderNames(request.headers, `${field}.headers`, violations, true);
  checkCount(Object.keys(request.query).length, `${field}.query`, violations);
  for (const name of Object.keys(request.query)) {
    if (name.length === 0) violations.add(key(`${field}.query`, name), "a query parameter needs a name");
  }
  const body = request.body;
  if (body.case !== undefined && (request.method === "GET" || request.method === "HEAD")) {
    violations.add(`${field}.${body.case}`, `a body is not allowed with ${request.method}`);
  } else if (body.case === "raw" && Buffer.byteLength(body.value) > maxBodyBytes) {
    violations.add(`${field}.raw`, "must be at most 1 MiB");
  } else if (body.case === "json") {
    const json = valueToJson(body.value);
    if (json === undefined) violations.add(`${field}.json`, "must be a JSON value (no NaN or Infinity)");
    else if (Buffer.byteLength(JSON.stringify(json)) > maxBodyBytes)
      violations.add(`${field}.json`, "must be at most 1 MiB as JSON");
  }
  checkMs(request.timeoutMs, `${field}.timeout_ms`, violations, "the default, 10000");
}

function checkExpectation(expect: HttpExpectation, field: string, violations: Violations): void {
  checkCount(expect.status.length, `${field}.status`, violations, httpStepBounds.statuses);
  expect.status.forEach((status, index) => {
    if (status < 100 || status > 599) violations.add(`${field}.status[${index}]`, "must be 100 to 599");
  });
  checkHeaderNames(expect.headers, `${field}.headers`, violations, false);
  checkCount(expect.bodyContains.length, `${field}.body_contains`, violations);
  checkCount(expect.bodyNotContains.length, `${field}.body_not_contains`, violations);
  checkCount(Object.keys(expect.json).length, `${field}.json`, violations);
  for (const [path, value] of Object.entries(expect.json)) {
    if (!isJsonPath(path)) violations.add(key(`${field}.json`, path), jsonPathRule);
    else if (valueToJson(value) === undefined)
      violations.add(key(`${field}.json`, path), "must be a JSON value (no NaN or Infinity)");
  }
  checkMs(expect.maxDurationMs, `${field}.max_duration_ms`, violations, "no limit");
}

function checkHttp(http: HttpStep, field: string, violations: Violations): void {
  if (!http.request) violations.add(`${field}.request`, "is required");
  else checkRequest(http.request, `${field}.request`, violations);
  if (http.expect) checkExpectation(http.expect, `${field}.expect`, violations);
  checkCount(Object.keys(http.save).length, `${field}.save`, violations);
  for (const [name, path] of Object.entries(http.save)) {
    const at = key(`${field}.save`, name);
    if (!variableNamePattern.test(name))
      violations.add(
        at,
        "the name must start with a letter or underscore and hold only letters, digits and _",
      );
    else if (!isJsonPath(path)) violations.add(at, jsonPathRule);
  }
}

/**
 * Checks a test case's steps (1 to 100), adding every violation under `field` (e.g. `steps` or
 * `steps.steps`), and returns their storage form.
 */
export function checkSteps(steps: readonly Step[], field: string, violations: Violations): JsonValue[] {
  if (steps.length < 1 || steps.length > 100)
    violations.add(field, `must hold 1 to 100 steps (got ${steps.length})`);
  // Screenshot names are unique within the test case: lower-cased name -> where it is.
  const screenshots = new Map<string, string>();
  return steps.slice(0, 100).map((step, index) => {
    const at = `${field}[${index}]`;
    const before = violations.count;
    checkName(step.name, `${at}.name`, violations);
    if (step.kind.case === "http") checkHttp(step.kind.value, `${at}.http`, violations);
    else if (step.kind.case === "browser")
      checkBrowser(step.kind.value, `${at}.browser`, violations, screenshots);
    else
      violations.add(at, "needs a kind: http (a request to send) or browser (an action on the test's page)");
    if (violations.count > before) return null;
    const trimmed = clone(StepSchema, step);
    trimmed.name = step.name.trim();
    const stored = toJson(StepSchema, trimmed);
    // PostgreSQL's jsonb cannot hold a NUL character inside a string.
    if (JSON.stringify(stored).includes("\\u0000")) violations.add(at, "must not contain NUL characters");
    return stored;
  });
}

/** Steps as stored back into messages (tolerating fields a later version of step.proto dropped). */
export const stepsFromStorage = (stored: readonly JsonValue[]): Step[] =>
  stored.map((json) => fromJson(StepSchema, json, { ignoreUnknownFields: true }));
