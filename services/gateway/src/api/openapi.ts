import { createHash } from "node:crypto";
import {
  createDocument,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponseObject,
} from "zod-openapi";
import { contentImportOperation, type Operation, operations, type ResponseDefinition } from "./operations.js";
import { errorSchema } from "./schemas.js";

/**
 * The OpenAPI 3.1 document of /v1, generated from the operation table (operations.ts), whose
 * schemas also validate the requests: the document and the gateway cannot disagree.
 */

const description = `The REST API of Testrun: CI pipelines and AI agents list a project's environments, test plans
and test cases, start test runs and follow them. docs/rest-api.md in the repository is the contract in words.

Authenticate with a project API key (\`trk_…\`) in \`Authorization: Bearer <key>\` or \`X-Api-Key: <key>\`.
Each key may make 60 requests a minute (RateLimit-* headers on every keyed answer; 429 with Retry-After
beyond). Every error body is \`{ "error": "<message>", "code": "<code>" }\` with the extras of its answer.
A run is followed with GET /v1/runs/{id} until \`finished\` is true (every 15 seconds is the
recommended interval).`;

function operationObject(operation: Operation): ZodOpenApiOperationObject {
  const keyed = operation.access !== "none";
  return {
    operationId: operation.operationId,
    summary: operation.summary,
    description: operation.description,
    tags: [
      /^\/v1\/(runs|artifacts)/.test(operation.path)
        ? "runs"
        : operation.access === "none"
          ? "meta"
          : "project",
    ],
    ...(!keyed && { security: [] }),
    requestParams: {
      ...(operation.query && { query: operation.query }),
      ...(operation.headers && { header: operation.headers }),
      ...(operation.pathParams && { path: operation.pathParams }),
    },
    ...(operation.body && {
      requestBody: {
        required: operation.body.required,
        content: { "application/json": { schema: operation.body.schema } },
      },
    }),
    responses: Object.fromEntries(
      Object.entries(operation.responses).map(([status, response]) => [status, responseObject(response)]),
    ),
  };
}

/** One object per answer: a shared answer (with an id) becomes one component only when it is the same object. */
const responseObjects = new WeakMap<ResponseDefinition, ZodOpenApiResponseObject>();

function responseObject(response: ResponseDefinition): ZodOpenApiResponseObject {
  let object = responseObjects.get(response);
  if (!object) {
    object = {
      ...(response.id && { id: response.id }),
      description: response.description,
      headers: response.headers,
      content: Object.fromEntries(
        (response.contentTypes ?? ["application/json"]).map((type) => [type, { schema: response.schema }]),
      ),
    };
    responseObjects.set(response, object);
  }
  return object;
}

export function buildOpenApiDocument(): Record<string, unknown> {
  const paths: ZodOpenApiPathsObject = {};
  for (const operation of Object.values(operations) as Operation[]) {
    paths[operation.path] = { ...paths[operation.path], [operation.method]: operationObject(operation) };
  }
  // The one operation a content token opens, and no API key (routes/content-import.ts).
  paths[contentImportOperation.path] = {
    [contentImportOperation.method]: {
      ...operationObject(contentImportOperation),
      tags: ["content"],
      security: [{ contentToken: [] }],
    },
  };
  return createDocument({
    openapi: "3.1.0",
    info: {
      title: "Testrun REST API",
      version: "1",
      description,
    },
    servers: [{ url: "/", description: "This gateway" }],
    security: [{ bearerKey: [] }, { headerKey: [] }],
    tags: [
      { name: "project", description: "What the key's project holds." },
      { name: "runs", description: "Starting and following test runs." },
      { name: "content", description: "Importing a project's content with a content token." },
      { name: "meta", description: "About the API itself." },
    ],
    components: {
      schemas: { Error: errorSchema },
      securitySchemes: {
        bearerKey: {
          type: "http",
          scheme: "bearer",
          description: "A project API key: Authorization: Bearer trk_…",
        },
        headerKey: {
          type: "apiKey",
          in: "header",
          name: "X-Api-Key",
          description: "The same key in a header of its own.",
        },
        contentToken: {
          type: "http",
          scheme: "bearer",
          description: "A content token: Authorization: Bearer trc_…, import only",
        },
      },
    },
    paths,
  }) as unknown as Record<string, unknown>;
}

/** The document as served: built once, with an ETag of its bytes. */
export interface ServedDocument {
  json: string;
  etag: string;
}

let served: ServedDocument | undefined;

export function servedOpenApiDocument(): ServedDocument {
  if (!served) {
    const json = JSON.stringify(buildOpenApiDocument());
    served = { json, etag: `"${createHash("sha256").update(json).digest("base64url").slice(0, 27)}"` };
  }
  return served;
}
