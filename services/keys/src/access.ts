import { create } from "@bufbuild/protobuf";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { type CatalogService, Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { type Actor, ActorSchema } from "@testrun/gen/testrun/common/v1/actor_pb";
import { requireAccess, requireActor } from "@testrun/kit";

// Who may create, list and revoke keys is decided by the catalog, which owns projects, members and
// roles (CatalogService.CheckAccess). This module only adds what is the keys service's own rule:
// API keys never manage keys.

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
    return (await requireAccess(this.catalog, actor, projectId, permission)).organizationId;
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
      await requireAccess(this.catalog, actor, projectId, Permission.EDIT);
    } catch (error) {
      const e = ConnectError.from(error);
      if (e.code !== Code.NotFound && e.code !== Code.PermissionDenied) throw e;
      throw new ConnectError(
        `creator ${memberId} is not an active EDITOR or above of the project's organization`,
        Code.PermissionDenied,
      );
    }
  }
}
