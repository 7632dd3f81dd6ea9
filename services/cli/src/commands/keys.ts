// Project API keys (KeysService).
import type { ApiKey, CreateKeyResponse, KeyExpiry } from "@testrun/gen/testrun/keys/v1/keys_pb";
import type { CliContext } from "../context.js";
import { required } from "./organizations.js";

export interface CreateKeyInput {
  projectId: string;
  /** Where the key is used, e.g. "github actions: deploy". */
  name: string;
  /** The member the key acts for: an active EDITOR or above (operators must name one). */
  creatorMemberId: string;
  /** UNSPECIFIED means 90 days. */
  expiry?: KeyExpiry;
}

/** Creates a key. The response carries the secret: this is the only time it exists outside the caller. */
export async function createKey(ctx: CliContext, input: CreateKeyInput): Promise<CreateKeyResponse> {
  const response = await ctx.keys.createKey({
    actor: ctx.actor,
    projectId: input.projectId,
    name: input.name,
    expiry: input.expiry,
    creatorMemberId: input.creatorMemberId,
  });
  required(response.key, "key");
  return response;
}

export async function listKeys(
  ctx: CliContext,
  input: { projectId: string; includeRevoked?: boolean },
): Promise<ApiKey[]> {
  const { keys } = await ctx.keys.listKeys({
    actor: ctx.actor,
    projectId: input.projectId,
    includeRevoked: input.includeRevoked ?? false,
  });
  return keys;
}

export async function revokeKey(
  ctx: CliContext,
  input: { projectId: string; keyId: string },
): Promise<ApiKey> {
  const { key } = await ctx.keys.revokeKey({ actor: ctx.actor, ...input });
  return required(key, "key");
}
