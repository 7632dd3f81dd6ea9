import { type Client, Code, ConnectError } from "@connectrpc/connect";
import {
  type CatalogService,
  type CheckAccessResponse,
  Permission,
  Role,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
import { requireAccess, requireActor } from "@testrun/kit";

/**
 * Reading automation needs read rights; changing it what changing project content needs (EDIT).
 * API keys never manage automation (automation.proto). Answers the catalog's grant.
 */
export async function authorize(
  catalog: Client<typeof CatalogService>,
  actor: Actor | undefined,
  projectId: string,
  change: boolean,
): Promise<CheckAccessResponse> {
  requireActor(actor);
  if (!projectId) throw new ConnectError("project_id is required", Code.InvalidArgument);
  if (actor?.kind.case === "apiKey")
    throw new ConnectError("API keys cannot manage automation", Code.PermissionDenied);
  return requireAccess(catalog, actor, projectId, change ? Permission.EDIT : Permission.READ);
}

/**
 * Whether a reader granted `access` may manage automation (EDITOR and above, an operator): what
 * decides who reads webhook URLs in full. The same line as `authorize(…, change: true)`.
 */
export const mayManage = (actor: Actor | undefined, access: CheckAccessResponse): boolean =>
  actor?.kind.case === "operator" || access.role >= Role.EDITOR;
