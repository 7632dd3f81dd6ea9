import { randomUUID } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import type { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import type { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import type { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { type BackgroundLoop, type Logger, startLoop } from "@testrun/kit";
import type { NotificationKind } from "./db/entities.js";
import type { Database, Sql } from "./sql.js";

interface NotificationRow {
  id: string;
  kind: NotificationKind;
  member_id: string | null;
  lost_at: Date | null;
  project_id: string | null;
  credits: number | null;
}

/**
 * The idempotency key of a new project's grant: one per project, so the grant lands once however
 * often it is delivered (BillingService.GrantCredits is idempotent per project and key).
 */
export const newProjectGrantKey = "new-project";

/** Longest wait between two attempts of one notification. */
const maxBackoffMs = 10 * 60_000;

/**
 * Tells other services what the catalog changed that concerns them: the keys service of a member
 * who lost EDITOR-or-above rights (KeysService.DisableKeysOfMember) and of a deleted project
 * (RevokeProjectKeys); the runs service of a deleted project, whose artifacts must go
 * (RunsService.PurgeProjectArtifacts); the billing service of a new project's credits
 * (BillingService.GrantCredits, as an operator, NEW_PROJECT_CREDITS).
 *
 * The change and its notifications are written in one transaction (`enqueue…`, rows in
 * catalog.key_notifications, named after its first use). Right after the commit the RPC that made
 * the change delivers them (`deliver`); when a service cannot be reached the change stays
 * committed, the RPC still succeeds, and a background loop retries with backoff until the service
 * acknowledges. That is safe for keys because the catalog does not rely on the keys service to stop
 * them: every RPC taking an ApiKeyActor (CheckAccess included) re-checks the creator's membership
 * and rights_lost_at against key_created_at itself (access.ts), so the keys are refused from the
 * moment of the commit; the notification makes the keys service's own answers (VerifyKey, its
 * gateway cache, ListKeys) agree. It is safe for artifacts because every read of one asks the
 * catalog first (CheckAccess: the deleted project is NOT_FOUND), so only their deletion waits.
 * A new project's grant is keyed by the project (`newProjectGrantKey`), so a delivery repeated
 * after a crash or a lost answer grants nothing more.
 */
export class Outbox {
  private loop: BackgroundLoop | undefined;

  constructor(
    private readonly db: Database,
    private readonly services: {
      keys: Pick<Client<typeof KeysService>, "disableKeysOfMember" | "revokeProjectKeys">;
      runs: Pick<Client<typeof RunsService>, "purgeProjectArtifacts">;
      billing: Pick<Client<typeof BillingService>, "grantCredits">;
    },
    private readonly logger: Logger,
    private readonly retryMs = 10_000,
  ) {}

  /** Records, inside the caller's transaction, that the member's keys created before `lostAt` must die. */
  enqueueMemberLoss(sql: Sql, memberId: string, lostAt: Date): Promise<string> {
    return this.enqueue(sql, "disable_member_keys", { memberId, lostAt });
  }

  /**
   * Records, inside the caller's transaction, that every key of a deleted project must be revoked
   * and its artifacts deleted: one notification for each service.
   */
  async enqueueProjectDeletion(sql: Sql, projectId: string): Promise<string[]> {
    return [
      await this.enqueue(sql, "revoke_project_keys", { projectId }),
      await this.enqueue(sql, "purge_project_artifacts", { projectId }),
    ];
  }

  /**
   * Records, inside the caller's transaction, that a new project is to be granted its first
   * credits (NEW_PROJECT_CREDITS); nothing when that is 0.
   */
  async enqueueNewProjectGrant(sql: Sql, projectId: string, credits: number): Promise<string[]> {
    return credits > 0 ? [await this.enqueue(sql, "grant_new_project_credits", { projectId, credits })] : [];
  }

  private async enqueue(
    sql: Sql,
    kind: NotificationKind,
    fields: { memberId?: string; lostAt?: Date; projectId?: string; credits?: number },
  ): Promise<string> {
    const id = randomUUID();
    // Not due for the retry loop before the caller's own attempt has had its chance.
    await sql.all(
      `insert into catalog.key_notifications (id, kind, member_id, lost_at, project_id, credits, created_at, attempts, next_attempt_at)
       values (?, ?, ?, ?, ?, ?, ?, 0, ?)`,
      [
        id,
        kind,
        fields.memberId ?? null,
        fields.lostAt ?? null,
        fields.projectId ?? null,
        fields.credits ?? null,
        new Date(),
        new Date(Date.now() + this.retryMs),
      ],
    );
    return id;
  }

  /** Delivers notifications just committed. Never throws: what fails stays queued for the retry loop. */
  async deliver(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const row = await this.db
        .read((sql) =>
          sql.one<NotificationRow>(
            "select id, kind, member_id, lost_at, project_id, credits from catalog.key_notifications where id = ?",
            [id],
          ),
        )
        .catch((err: unknown) => {
          this.logger.error({ err }, "could not read a queued notification");
          return undefined;
        });
      if (row) await this.attempt(row, 0);
    }
  }

  /** Starts the loop that retries notifications the keys service has not acknowledged. */
  start(): void {
    const { retryMs, logger } = this;
    const pass = () => this.retryDue();
    this.loop = startLoop({
      name: "notification retry",
      intervalMs: retryMs,
      firstAfterMs: retryMs,
      pass,
      logger,
    });
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
  }

  /** Claims due rows (pushing their next attempt out, so no other replica takes them) and delivers them. */
  private async retryDue(): Promise<void> {
    const due = await this.db.write((sql) =>
      sql.all<NotificationRow & { attempts: number }>(
        `update catalog.key_notifications n set next_attempt_at = ?
         where n.id in (select id from catalog.key_notifications where next_attempt_at <= now()
                        order by next_attempt_at limit 50 for update skip locked)
         returning n.id, n.kind, n.member_id, n.lost_at, n.project_id, n.credits, n.attempts`,
        [new Date(Date.now() + maxBackoffMs)],
      ),
    );
    for (const row of due) await this.attempt(row, row.attempts);
  }

  /** Delivers one notification to its service; answers what it did, for the log line. */
  private async send(row: NotificationRow): Promise<{ message: string; count: number }> {
    const { keys, runs, billing } = this.services;
    switch (row.kind) {
      case "disable_member_keys": {
        const { disabledCount } = await keys.disableKeysOfMember({
          memberId: row.member_id ?? "",
          lostAt: timestampFromDate(row.lost_at ?? new Date()),
        });
        return { message: "keys service disabled the member's keys", count: disabledCount };
      }
      case "revoke_project_keys": {
        const { revokedCount } = await keys.revokeProjectKeys({ projectId: row.project_id ?? "" });
        return { message: "keys service revoked the project's keys", count: revokedCount };
      }
      case "purge_project_artifacts": {
        const { deletedCount, remainingCount } = await runs.purgeProjectArtifacts({
          projectId: row.project_id ?? "",
        });
        return {
          message: "runs service purges the project's artifacts",
          count: Number(deletedCount + remainingCount),
        };
      }
      case "grant_new_project_credits":
        return this.grantNewProject(billing, row.project_id ?? "", row.credits ?? 0);
    }
  }

  /**
   * Grants a new project its credits, once. A project deleted before its grant was delivered is
   * NOT_FOUND in billing's access check: nothing is owed to it any more. ALREADY_EXISTS means the
   * project's grant is already in the ledger (with another amount: not possible from here, since
   * the amount travels with the row): done either way.
   */
  private async grantNewProject(
    billing: Pick<Client<typeof BillingService>, "grantCredits">,
    projectId: string,
    credits: number,
  ): Promise<{ message: string; count: number }> {
    try {
      const { entry } = await billing.grantCredits({
        actor: { kind: { case: "operator", value: { name: "catalog (NEW_PROJECT_CREDITS)" } } },
        projectId,
        amount: BigInt(credits),
        reason: "granted to every new project (NEW_PROJECT_CREDITS)",
        idempotencyKey: newProjectGrantKey,
      });
      return { message: "billing service granted the new project its credits", count: Number(entry?.amount) };
    } catch (error) {
      const code = ConnectError.from(error).code;
      if (code === Code.NotFound)
        return { message: "the new project was deleted before its grant", count: 0 };
      if (code === Code.AlreadyExists) return { message: "the new project already had its grant", count: 0 };
      throw error;
    }
  }

  private async attempt(row: NotificationRow, attempts: number): Promise<void> {
    const subject =
      row.kind === "disable_member_keys" ? { member_id: row.member_id } : { project_id: row.project_id };
    const service =
      row.kind === "purge_project_artifacts"
        ? "runs"
        : row.kind === "grant_new_project_credits"
          ? "billing"
          : "keys";
    try {
      const { message, count } = await this.send(row);
      await this.db.read((sql) => sql.all("delete from catalog.key_notifications where id = ?", [row.id]));
      // Said once the notification is done (its row gone), so the line means nothing is left to send.
      this.logger.info({ ...subject, count }, message);
    } catch (error) {
      const code = Code[ConnectError.from(error).code];
      const backoff = Math.min(this.retryMs * 2 ** attempts, maxBackoffMs);
      await this.db
        .read((sql) =>
          sql.all(
            "update catalog.key_notifications set attempts = ?, last_error = ?, next_attempt_at = ? where id = ?",
            [attempts + 1, code, new Date(Date.now() + backoff), row.id],
          ),
        )
        .catch((err: unknown) => this.logger.error({ err }, "could not record a failed notification"));
      // Logged once the attempt is recorded, so the line never runs ahead of the table.
      this.logger.warn(
        { ...subject, kind: row.kind, service, code, attempts: attempts + 1, retry_in_ms: backoff },
        `${service} service not reached; the notification stays queued and is retried`,
      );
    }
  }
}
