import type { ServiceImpl } from "@connectrpc/connect";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { fromHandlerGroups } from "@testrun/kit";
import { checkAccessHandlers } from "./rpc/check-access.js";
import type { Deps } from "./rpc/context.js";
import { environmentHandlers } from "./rpc/environments.js";
import { importContentHandlers } from "./rpc/import-content.js";
import { memberHandlers } from "./rpc/members.js";
import { organizationHandlers } from "./rpc/organizations.js";
import { projectHandlers } from "./rpc/projects.js";
import { resolveHandlers } from "./rpc/resolve.js";
import { testCaseHandlers } from "./rpc/test-cases.js";
import { testPlanHandlers } from "./rpc/test-plans.js";
import { variableHandlers } from "./rpc/variables.js";

/** The executor identity may call only these (catalog.proto: executors read variable values, nothing else). */
export const executorMethods = ["GetVariableValues", "GetVariableValuesBatch"];

/**
 * Fields whose text may hold NUL (the kit refuses NUL everywhere else, see nul-text.ts): a
 * variable's value is stored encrypted, never as text, so any text is fine there.
 */
export const nulAllowed = [
  "testrun.catalog.v1.CreateVariableRequest.value",
  "testrun.catalog.v1.UpdateVariableRequest.value",
];

/** Every method of CatalogService. */
export function catalogService(deps: Deps): ServiceImpl<typeof CatalogService> {
  return fromHandlerGroups(
    CatalogService,
    checkAccessHandlers(deps),
    organizationHandlers(deps),
    memberHandlers(deps),
    projectHandlers(deps),
    environmentHandlers(deps),
    testPlanHandlers(deps),
    testCaseHandlers(deps),
    importContentHandlers(deps),
    variableHandlers(deps),
    resolveHandlers(deps),
  );
}
