import { create } from "@bufbuild/protobuf";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { type CatalogService, Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { type Actor, ActorSchema } from "@testrun/gen/testrun/common/v1/actor_pb";
import { requireActor } from "@testrun/kit";

// Who may create, list and revoke keys is decided by the catalog, which owns projects, members and
// roles (CatalogService.CheckAccess). This module only adds what is the keys service's own rule:
// API keys never manage keys.

/** Codes of CheckAccess that answer the caller's question and are passed on as they are. */
const answers = new Set([Code.NotFound, Code.PermissionDenied, Code.InvalidArgument]);

/**
 * A failed CheckAccess as our caller should see it: a refusal as the catalog worded it; the
 * catalog being unreachable as UNAVAILABLE; anything else (our token refused, a method missing) is
 * our fault, not the caller's: INTERNAL.
 */
function fromCatalog(error: unknown): ConnectError {
  const e = ConnectError.from(error);
  if (answers.has(e.code)) return new ConnectError(e.rawMessage, e.code);
  if (e.code === Code.Unavailable || e.code === Code.DeadlineExceeded)
    return new ConnectError("the catalog service is unavailable", Code.Unavailable);
  return new ConnectError("could not check access with the catalog service", Code.Internal);
}

export class Access {
  constructor(private readonly catalog: Client<typeof CatalogService>) {}

  /**
   * Checks that `actor` may do `permission` in the project and returns the project's
   * organization. NOT_FOUND for a project that does not exist or is not the actor's to see.
   */
  async check(actor: Actor | undefined, projectId: string, permission: Permission): Promise<string> {
    const kind = requireActor(actor);
    if (kind === "apiKey")
      throw new ConnectError("an API key cannot list, create or revoke API keys", Code.PermissionDenied);
    if (!projectId) throw new ConnectError("project_id is required", Code.InvalidArgument);
    try {
      const granted = await this.catalog.checkAccess({ actor, projectId, permission });
      return granted.organizationId;
    } catch (error) {
      throw fromCatalog(error);
    }
  }

  /**
   * Checks that `memberId`, for whom an operator creates a key, is an active EDITOR or above of the
   * project's organization. The project is known to exist by then, so any refusal (including the
   * member belonging to another organization, which the catalog reports as NOT_FOUND) is
   * PERMISSION_DENIED.
   */
  async checkCreator(memberId: string, projectId: string): Promise<void> {
    const actor = create(ActorSchema, { kind: { case: "memberId", value: memberId } });
    try {
      await this.catalog.checkAccess({ actor, projectId, permission: Permission.EDIT });
    } catch (error) {
      const e = fromCatalog(error);
      if (e.code !== Code.NotFound && e.code !== Code.PermissionDenied) throw e;
      throw new ConnectError(
        `creator ${memberId} is not an active EDITOR or above of the project's organization`,
        Code.PermissionDenied,
      );
    }
  }
}
