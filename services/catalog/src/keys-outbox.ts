import { randomUUID } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import type { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import type { Logger } from "@testrun/kit";
import type { KeyNotificationKind } from "./db/entities.js";
import type { Database, Sql } from "./sql.js";

interface NotificationRow {
  id: string;
  kind: KeyNotificationKind;
  member_id: string | null;
  lost_at: Date | null;
  project_id: string | null;
}

/** Longest wait between two attempts of one notification. */
const maxBackoffMs = 10 * 60_000;

/**
 * Tells the keys service what the catalog changed that kills keys: a member who lost
 * EDITOR-or-above rights (DisableKeysOfMember) and a deleted project (RevokeProjectKeys).
 *
 * The change and its notification are written in one transaction (`enqueue…`, a row in
 * catalog.key_notifications). Right after the commit the RPC that made the change delivers it
 * (`deliver`); when the keys service cannot be reached the change stays committed, the RPC still
 * succeeds, and a background loop retries with backoff until the keys service acknowledges. That is
 * safe because the catalog does not rely on the keys service to stop such keys: every RPC taking an
 * ApiKeyActor (CheckAccess included) re-checks the creator's membership and rights_lost_at against
 * key_created_at itself (access.ts), so the keys are refused from the moment of the commit. The
 * notification makes the keys service's own answers (VerifyKey, its gateway cache, ListKeys) agree.
 */
export class KeysOutbox {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly keys: Client<typeof KeysService>,
    private readonly logger: Logger,
    private readonly retryMs = 10_000,
  ) {}

  /** Records, inside the caller's transaction, that the member's keys created before `lostAt` must die. */
  enqueueMemberLoss(sql: Sql, memberId: string, lostAt: Date): Promise<string> {
    return this.enqueue(sql, "disable_member_keys", { memberId, lostAt });
  }

  /** Records, inside the caller's transaction, that every key of a deleted project must be revoked. */
  enqueueProjectDeletion(sql: Sql, projectId: string): Promise<string> {
    return this.enqueue(sql, "revoke_project_keys", { projectId });
  }

  private async enqueue(
    sql: Sql,
    kind: KeyNotificationKind,
    fields: { memberId?: string; lostAt?: Date; projectId?: string },
  ): Promise<string> {
    const id = randomUUID();
    // Not due for the retry loop before the caller's own attempt has had its chance.
    await sql.all(
      `insert into catalog.key_notifications (id, kind, member_id, lost_at, project_id, created_at, attempts, next_attempt_at)
       values (?, ?, ?, ?, ?, ?, 0, ?)`,
      [
        id,
        kind,
        fields.memberId ?? null,
        fields.lostAt ?? null,
        fields.projectId ?? null,
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
            "select id, kind, member_id, lost_at, project_id from catalog.key_notifications where id = ?",
            [id],
          ),
        )
        .catch((err: unknown) => {
          this.logger.error({ err }, "could not read a queued keys notification");
          return undefined;
        });
      if (row) await this.attempt(row, 0);
    }
  }

  /** Starts the loop that retries notifications the keys service has not acknowledged. */
  start(): void {
    const tick = () => {
      this.running = this.retryDue()
        .catch((err: unknown) => this.logger.error({ err }, "keys notification retry failed"))
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) this.timer = setTimeout(tick, this.retryMs);
        });
    };
    this.timer = setTimeout(tick, this.retryMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Claims due rows (pushing their next attempt out, so no other replica takes them) and delivers them. */
  private async retryDue(): Promise<void> {
    const due = await this.db.write((sql) =>
      sql.all<NotificationRow & { attempts: number }>(
        `update catalog.key_notifications n set next_attempt_at = ?
         where n.id in (select id from catalog.key_notifications where next_attempt_at <= now()
                        order by next_attempt_at limit 50 for update skip locked)
         returning n.id, n.kind, n.member_id, n.lost_at, n.project_id, n.attempts`,
        [new Date(Date.now() + maxBackoffMs)],
      ),
    );
    for (const row of due) await this.attempt(row, row.attempts);
  }

  private async attempt(row: NotificationRow, attempts: number): Promise<void> {
    const subject =
      row.kind === "disable_member_keys" ? { member_id: row.member_id } : { project_id: row.project_id };
    try {
      if (row.kind === "disable_member_keys") {
        const { disabledCount } = await this.keys.disableKeysOfMember({
          memberId: row.member_id ?? "",
          lostAt: timestampFromDate(row.lost_at ?? new Date()),
        });
        this.logger.info({ ...subject, disabled: disabledCount }, "keys service disabled the member's keys");
      } else {
        const { revokedCount } = await this.keys.revokeProjectKeys({ projectId: row.project_id ?? "" });
        this.logger.info({ ...subject, revoked: revokedCount }, "keys service revoked the project's keys");
      }
      await this.db.read((sql) => sql.all("delete from catalog.key_notifications where id = ?", [row.id]));
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
        .catch((err: unknown) => this.logger.error({ err }, "could not record a failed keys notification"));
      // Logged once the attempt is recorded, so the line never runs ahead of the table.
      this.logger.warn(
        { ...subject, kind: row.kind, code, attempts: attempts + 1, retry_in_ms: backoff },
        "keys service not reached; the notification stays queued and is retried",
      );
    }
  }
}
