import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type Handlers, invalid, type KeysDeps } from "./context.js";
import { tombstone } from "./tombstones.js";

/**
 * DisableKeysOfMember, RevokeProjectKeys: what the catalog tells the keys service when access is
 * lost (a member lost rights, a project was deleted). Both idempotent.
 */
export function accessLossHandlers(deps: KeysDeps): Handlers {
  const { store, logger } = deps;
  return {
    async disableKeysOfMember(req) {
      if (!req.memberId) throw invalid("member_id is required");
      if (!req.lostAt) throw invalid("lost_at is required");
      const { disabled, kill } = await store.disableMember(
        req.memberId,
        timestampDate(req.lostAt),
        new Date(),
      );
      await tombstone(deps, kill);
      if (disabled > 0)
        logger.info({ memberId: req.memberId, disabled }, "keys of a member who lost rights disabled");
      return { disabledCount: disabled };
    },

    async revokeProjectKeys(req) {
      if (!req.projectId) throw invalid("project_id is required");
      const { revoked, kill } = await store.revokeProject(req.projectId, new Date());
      await tombstone(deps, kill);
      if (revoked > 0)
        logger.info({ projectId: req.projectId, revoked }, "keys of a deleted project revoked");
      return { revokedCount: revoked };
    },
  };
}
