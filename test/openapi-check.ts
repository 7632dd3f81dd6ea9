// Checks an answer of the gateway against its OpenAPI document: the operation and its status are
// documented, every required header is there and every documented header has the documented form,
// the body is JSON and matches the documented schema (or, for bytes, is of a documented media type). The REST helpers of the end-to-end suites
// (test/pipeline.ts, services/gateway/test/support.ts) call it on every answer they receive.

import { buildOpenApiDocument } from "@testrun/gateway/openapi";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS whose default export is the function.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type Json = Record<string, unknown>;

const document = buildOpenApiDocument() as Json & { paths: Record<string, Record<string, Json>> };
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(document, "openapi");

/** The document's paths as patterns: /v1/runs/{id} matches /v1/runs/anything-but-a-slash. */
const templates = Object.keys(document.paths).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
}));

const pointer = (...parts: string[]) =>
  `openapi#/${parts.map((part) => part.replaceAll("~", "~0").replaceAll("/", "~1")).join("/")}`;

const resolve = (value: Json): Json => {
  const ref = value.$ref;
  if (typeof ref !== "string") return value;
  const [, section, name] = /^#\/components\/(\w+)\/(.+)$/.exec(ref) ?? [];
  const components = document.components as Record<string, Record<string, Json>>;
  const found = section && name ? components[section]?.[name] : undefined;
  if (!found) throw new Error(`unresolvable $ref ${ref}`);
  return found;
};

function validate(schemaPointer: string, value: unknown): string | undefined {
  const check = ajv.getSchema(schemaPointer);
  if (!check) return `no schema at ${schemaPointer}`;
  if (check(value)) return undefined;
  return ajv.errorsText(check.errors, { dataVar: "body" });
}

/** A header value as its schema types it (headers travel as text). */
const typed = (value: string, schema: Json): unknown =>
  schema.type === "integer" && /^-?[0-9]+$/.test(value) ? Number(value) : value;

export interface CheckedAnswer {
  method: string;
  /** The path with its query, as requested. */
  url: string;
  status: number;
  headers: Headers;
  text: string;
}

/**
 * The problems of an answer against the document; empty when it conforms. Paths the document does
 * not describe (404 for an unknown path, 405, /healthz) must still answer an error body.
 */
export function openApiProblems({ method, url, status, headers, text }: CheckedAnswer): string[] {
  const path = new URL(url, "http://gateway").pathname;
  const template = templates.find((t) => t.pattern.test(path))?.template;
  const operation = template ? document.paths[template]?.[method.toLowerCase()] : undefined;
  const where = `${method} ${path} → ${status}`;
  if (!operation) {
    // Unknown /v1 paths (404), wrong methods (405) and the like still answer the error shape.
    if (status < 400 || method === "HEAD" || !path.startsWith("/v1")) return [];
    const problem = validate(pointer("components", "schemas", "Error"), JSON.parse(text));
    return problem ? [`${where}: ${problem} in ${text.slice(0, 500)}`] : [];
  }
  const responses = operation.responses as Record<string, Json>;
  const documented = responses[String(status)];
  if (!documented) return [`${where}: status not documented for ${operation.operationId}`];
  const response = resolve(documented);
  const problems: string[] = [];
  for (const [name, declared] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
    const header = resolve(declared);
    const value = headers.get(name);
    if (value === null) {
      if (header.required) problems.push(`${where}: required header ${name} missing`);
      continue;
    }
    const schema = header.schema as Json;
    const check = ajv.compile(schema);
    if (!check(typed(value, schema)))
      problems.push(`${where}: header ${name}: ${value} ${ajv.errorsText(check.errors)}`);
  }
  if (method === "HEAD") return problems;
  const content = response.content as Record<string, Json> | undefined;
  const contentType = headers.get("content-type") ?? "";
  const media = content?.[contentType.split(";")[0]?.trim() ?? ""];
  if (!media) {
    problems.push(`${where}: content type ${contentType} not documented`);
    return problems;
  }
  // Bytes (an artifact's), whatever their media type: nothing more to check in them.
  if ((media.schema as Json | undefined)?.format === "binary") return problems;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [...problems, `${where}: body is not JSON`];
  }
  const statusKey = String(status);
  const schemaAt = documented.$ref
    ? pointer(
        "components",
        "responses",
        String(documented.$ref).split("/").pop() ?? "",
        "content",
        "application/json",
        "schema",
      )
    : pointer(
        "paths",
        template ?? "",
        method.toLowerCase(),
        "responses",
        statusKey,
        "content",
        "application/json",
        "schema",
      );
  const problem = validate(schemaAt, body);
  if (problem) problems.push(`${where}: ${problem} in ${text.slice(0, 500)}`);
  return problems;
}

/** Throws when an answer does not conform to the document. */
export function expectDocumented(answer: CheckedAnswer): void {
  const problems = openApiProblems(answer);
  if (problems.length) throw new Error(`answer not as the OpenAPI document says:\n${problems.join("\n")}`);
}
