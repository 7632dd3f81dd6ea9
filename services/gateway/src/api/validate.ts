import type Koa from "koa";
import type { z } from "zod";
import type { GatewayContext, GatewayState } from "../context.js";
import { HttpError } from "../http-error.js";
import type { Operation } from "./operations.js";
import { nulMessage } from "./schemas.js";

/**
 * Request validation from the operation table (operations.ts): the same schemas the OpenAPI
 * document is generated from. A request is checked in two steps, as the gateway always has:
 * the names of its query parameters before the key (a typo is a 400 even without a key), their
 * values, the headers and the body after it (an unauthenticated request learns nothing about
 * what it sent but that the key is missing).
 */

const invalid = (message: string) => new HttpError(400, "invalid_request", message);

/** Refuses query parameters the operation does not know: `?tags=smoke` would otherwise return everything. */
export function checkQueryNames(operation: Operation): Koa.Middleware<GatewayState> {
  const known = Object.keys(operation.query?.shape ?? {});
  return async (ctx, next) => {
    const unknown = Object.keys(ctx.query).find((name) => !known.includes(name));
    if (unknown !== undefined) {
      const hint = known.length ? `; accepted: ${known.join(", ")}` : "; this endpoint takes none";
      throw invalid(`unknown query parameter "${unknown}"${hint}`);
    }
    await next();
  };
}

type Output<S> = S extends z.ZodType ? z.output<S> : Record<string, never>;

/** What a validated request carries, typed by its operation's schemas. */
export interface Input<O extends Operation> {
  query: Output<O["query"]>;
  headers: Output<O["headers"]>;
  body: O["body"] extends { schema: infer S } ? Output<S> : undefined;
  params: Output<O["pathParams"]>;
}

/** Whether a schema (possibly optional or nullable) takes an array: such a query parameter may repeat. */
function takesArray(schema: z.ZodType): boolean {
  let current: z.core.$ZodType = schema;
  for (;;) {
    const def = current._zod.def as { type: string; innerType?: z.core.$ZodType };
    if (def.type === "array") return true;
    if (!def.innerType) return false;
    current = def.innerType;
  }
}

/**
 * The message of the first problem, in a fixed order: unknown fields, rules about the whole
 * object, then the fields in the order their schema declares them (the first problem of a field
 * first). Every schema in schemas.ts carries the messages.
 */
export function firstProblem(error: z.ZodError, schema: z.ZodObject): string {
  const order = Object.keys(schema.shape);
  const rank = (issue: z.core.$ZodIssue) => {
    if (issue.message === nulMessage) return order.length + 3;
    if (issue.code === "unrecognized_keys") return 0;
    if (issue.path.length === 0) return 1;
    const index = order.indexOf(String(issue.path[0]));
    return 2 + (index < 0 ? order.length : index);
  };
  const [first] = [...error.issues].sort((a, b) => rank(a) - rank(b));
  return first?.message ?? "the request is not valid";
}

function parse<S extends z.ZodObject>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalid(firstProblem(result.error, schema));
  return result.data;
}

/** A path that names nothing the operation can find is not found: 404 in the owning service's words. */
function pathParams<S extends z.ZodObject>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new HttpError(404, "not_found", firstProblem(result.error, schema));
  return result.data;
}

/** Validates the query values, headers and body of a request that passed authentication. */
export function validateInput<O extends Operation>(operation: O, ctx: GatewayContext): Input<O> {
  const query: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(operation.query?.shape ?? {})) {
    const value = ctx.query[name];
    if (value === undefined) continue;
    query[name] = takesArray(schema as z.ZodType) && !Array.isArray(value) ? [value] : value;
  }
  const headers: Record<string, unknown> = {};
  for (const name of Object.keys(operation.headers?.shape ?? {})) {
    const value = ctx.headers[name.toLowerCase()];
    if (value !== undefined) headers[name] = value;
  }
  return {
    query: operation.query ? parse(operation.query, query) : {},
    headers: operation.headers ? parse(operation.headers, headers) : {},
    body: operation.body ? parse(operation.body.schema, ctx.request.body ?? {}) : undefined,
    params: operation.pathParams ? pathParams(operation.pathParams, ctx.params) : {},
  } as Input<O>;
}
