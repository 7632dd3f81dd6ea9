import type { ServiceImpl } from "@connectrpc/connect";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { invalid } from "./errors.js";
import { checkAccessHandlers } from "./rpc/check-access.js";
import type { Deps } from "./rpc/context.js";
import { environmentHandlers } from "./rpc/environments.js";
import { memberHandlers } from "./rpc/members.js";
import { organizationHandlers } from "./rpc/organizations.js";
import { projectHandlers } from "./rpc/projects.js";
import { resolveHandlers } from "./rpc/resolve.js";
import { testCaseHandlers } from "./rpc/test-cases.js";
import { testPlanHandlers } from "./rpc/test-plans.js";
import { variableHandlers } from "./rpc/variables.js";

/** The executor identity may call only these (catalog.proto: executors read variable values, nothing else). */
export const executorMethods = ["GetVariableValues"];

/** Requests whose top-level `value` is a variable's secret: stored encrypted, so any text is fine there. */
const secretCarriers = new Set([
  "testrun.catalog.v1.CreateVariableRequest",
  "testrun.catalog.v1.UpdateVariableRequest",
]);

/**
 * Whether any text in a request (strings, map keys, nested messages) holds a NUL character, which
 * PostgreSQL text cannot store or compare: such input is refused up front instead of failing deep
 * in a query.
 */
function holdsNul(value: unknown): boolean {
  if (typeof value === "string") return value.includes("\u0000");
  if (Array.isArray(value)) return value.some(holdsNul);
  if (value === null || typeof value !== "object" || value instanceof Uint8Array) return false;
  return Object.entries(value).some(([key, inner]) => holdsNul(key) || holdsNul(inner));
}

function refusesNul<I extends object>(req: I): void {
  const { value: _secret, ...rest } = req as I & { value?: unknown; $typeName?: string };
  if (holdsNul(secretCarriers.has(String(rest.$typeName)) ? rest : req))
    throw invalid("text in the request must not contain NUL characters");
}

/** Every method of CatalogService. */
export function catalogService(deps: Deps): ServiceImpl<typeof CatalogService> {
  const handlers = {
    ...checkAccessHandlers(deps),
    ...organizationHandlers(deps),
    ...memberHandlers(deps),
    ...projectHandlers(deps),
    ...environmentHandlers(deps),
    ...testPlanHandlers(deps),
    ...testCaseHandlers(deps),
    ...variableHandlers(deps),
    ...resolveHandlers(deps),
  } as Record<string, (req: object, ctx: unknown) => unknown>;
  // A method left out would answer UNIMPLEMENTED: refuse to start instead.
  const missing = CatalogService.methods.filter((method) => !handlers[method.localName]);
  if (missing.length > 0)
    throw new Error(`CatalogService methods not implemented: ${missing.map((m) => m.name)}`);
  return Object.fromEntries(
    Object.entries(handlers).map(([name, handler]) => [
      name,
      (req: object, ctx: unknown) => {
        refusesNul(req);
        return handler(req, ctx);
      },
    ]),
  ) as unknown as ServiceImpl<typeof CatalogService>;
}
