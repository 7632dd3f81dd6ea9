import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
import type { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { requireActor } from "@testrun/kit";
import type { ServiceDeps } from "../deps.js";
import { invalid, runNotFound } from "../errors.js";
import { reportFinished } from "../finished.js";
import type { Effects } from "../store/settle.js";

/** Some of RunsService's methods; service.ts puts the groups together. */
export type Handlers = Partial<ServiceImpl<typeof RunsService>>;

/**
 * Every actor is authorized by the catalog (CheckAccess; a cached grant is used only under the
 * current access epoch: kit AccessCache), which also tells an unknown project (NOT_FOUND). For an API key that is its creator's rights, checked on every
 * call, reads included: the gateway verified the key, but a key whose creator lost the rights
 * it acts with must stop at once, even while the keys service (and so the gateway's key cache)
 * has not yet been told (docs/rest-api.md, "Authentication").
 */
export async function authorize(
  { access }: ServiceDeps,
  actor: Actor | undefined,
  projectId: string,
  permission: Permission,
): Promise<void> {
  const kind = requireActor(actor);
  if (!projectId) throw invalid("project_id is required");
  if (kind === "apiKey" && actor?.kind.case === "apiKey") {
    // Settled here without a call: another project's runs do not exist for a key, and no key
    // changes runs.
    if (actor.kind.value.projectId !== projectId) throw runNotFound();
    if (permission === Permission.EDIT)
      throw new ConnectError("API keys cannot change runs", Code.PermissionDenied);
  }
  await access.require(actor, projectId, permission);
}

/**
 * What a committed write left to do: tells the watchers of run `changedRunId` (undefined when no
 * run changed), then publishes and refunds.
 */
export async function afterCommit(
  { events, dispatcher, credits, logger }: ServiceDeps,
  changedRunId: string | undefined,
  effects: Effects,
): Promise<void> {
  reportFinished(effects, logger);
  if (changedRunId) await events.changed(changedRunId);
  if (effects.publish) await dispatcher.publish(effects.publish);
  if (effects.refundRunId) await credits.settle(effects.refundRunId);
}
