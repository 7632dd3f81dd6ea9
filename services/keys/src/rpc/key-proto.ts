import { create } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type ApiKey,
  ApiKeySchema,
  KeyExpiry,
  KeyKind,
  KeyState,
} from "@testrun/gen/testrun/keys/v1/keys_pb";
import type { KeyExpiryChoice, KeyKindName } from "../db/entities.js";
import { disabledAtOf, type KeyStateName, keyState, type StoredKey } from "../key-state.js";

// A stored key as the API shows it, and the API's expiry choices as stored.

export const expiryChoices: Record<KeyExpiry, KeyExpiryChoice | undefined> = {
  [KeyExpiry.UNSPECIFIED]: "90d",
  [KeyExpiry.DAYS_30]: "30d",
  [KeyExpiry.DAYS_90]: "90d",
  [KeyExpiry.YEAR_1]: "1y",
  [KeyExpiry.NEVER]: "never",
};
const expiryValues: Record<KeyExpiryChoice, KeyExpiry> = {
  "30d": KeyExpiry.DAYS_30,
  "90d": KeyExpiry.DAYS_90,
  "1y": KeyExpiry.YEAR_1,
  never: KeyExpiry.NEVER,
};
/** The API's kinds as stored; UNSPECIFIED is an API key, as every call meant before content tokens. */
export const kindChoices: Record<KeyKind, KeyKindName | undefined> = {
  [KeyKind.UNSPECIFIED]: "api",
  [KeyKind.API_KEY]: "api",
  [KeyKind.CONTENT_TOKEN]: "content",
};
const kindValues: Record<KeyKindName, KeyKind> = { api: KeyKind.API_KEY, content: KeyKind.CONTENT_TOKEN };
const states: Record<KeyStateName, KeyState> = {
  active: KeyState.ACTIVE,
  expired: KeyState.EXPIRED,
  revoked: KeyState.REVOKED,
  creator_lost_rights: KeyState.CREATOR_LOST_RIGHTS,
};

export const stamp = (date: Date | null): Timestamp | undefined =>
  date ? timestampFromDate(date) : undefined;

export function toProto(key: StoredKey, now: Date): ApiKey {
  const state = keyState(key, now);
  return create(ApiKeySchema, {
    id: key.id,
    projectId: key.projectId,
    name: key.name,
    displayPrefix: key.displayPrefix,
    createdAt: timestampFromDate(key.createdAt),
    lastUsedAt: stamp(key.lastUsedAt),
    expiresAt: stamp(key.expiresAt),
    creatorMemberId: key.creatorMemberId,
    state: states[state],
    expiry: expiryValues[key.expiry],
    revokedAt: state === "revoked" ? stamp(key.revokedAt) : undefined,
    disabledAt: state === "creator_lost_rights" ? stamp(disabledAtOf(key)) : undefined,
    kind: kindValues[key.kind],
  });
}
