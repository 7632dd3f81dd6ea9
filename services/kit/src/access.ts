import { type Client, Code, ConnectError } from "@connectrpc/connect";
import type {
  CatalogService,
  CheckAccessResponse,
  Permission,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";

// Who may do what in a project is decided by the catalog, which owns projects, members and roles
// (CatalogService.CheckAccess). Every other service asks it through `requireAccess`, so that a
// refusal reads the same whichever service the caller reached.

/** Codes of CheckAccess that answer the caller's question: passed on as the catalog worded them. */
const answers = new Set([Code.NotFound, Code.PermissionDenied, Code.InvalidArgument]);

/**
 * A failed CheckAccess as our caller should see it: a refusal (NOT_FOUND, PERMISSION_DENIED, or
 * INVALID_ARGUMENT for a malformed actor) with the catalog's message; the catalog unreachable or
 * too slow as UNAVAILABLE, so that the caller retries; anything else (our service token refused, a
 * method missing, the catalog's own failure) is not the caller's doing: INTERNAL. The last two say
 * nothing of the cause, which stays on the error (`cause`) for our logs.
 */
function fromCatalog(error: unknown): ConnectError {
  const e = ConnectError.from(error);
  if (answers.has(e.code)) return new ConnectError(e.rawMessage, e.code);
  if (e.code === Code.Unavailable || e.code === Code.DeadlineExceeded)
    return new ConnectError("the catalog service is unavailable", Code.Unavailable, undefined, undefined, e);
  return new ConnectError(
    "could not check access with the catalog service",
    Code.Internal,
    undefined,
    undefined,
    e,
  );
}

/**
 * Checks with the catalog that `actor` may do `permission` in the project, and returns its answer
 * (the project's organization and the actor's role). Throws a ConnectError for the caller as
 * `fromCatalog` words it: NOT_FOUND for a project that does not exist or is not the actor's to see.
 */
export async function requireAccess(
  catalog: Client<typeof CatalogService>,
  actor: Actor | undefined,
  projectId: string,
  permission: Permission,
): Promise<CheckAccessResponse> {
  try {
    return await catalog.checkAccess({ actor, projectId, permission });
  } catch (error) {
    throw fromCatalog(error);
  }
}
