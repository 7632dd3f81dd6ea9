import type { Orm } from "@testrun/kit";

/** A finished run's refund, as credits.ts settles it: what is due, then that it was given. */
export class RefundStore {
  constructor(private readonly orm: Orm) {}

  async refundDue(runId: string): Promise<{ projectId: string; amount: number; reason: string } | undefined> {
    const rows = await this.orm.em
      .fork()
      .execute<{ project_id: string; refund_due: number; refund_reason: string | null }[]>(
        "select project_id, refund_due, refund_reason from runs.runs where id = ? and refund_due > 0 and refunded_at is null",
        [runId],
      );
    const row = rows[0];
    return row
      ? { projectId: row.project_id, amount: row.refund_due, reason: row.refund_reason ?? "refund" }
      : undefined;
  }

  async markRefunded(runId: string): Promise<void> {
    await this.orm.em
      .fork()
      .execute("update runs.runs set refunded_at = now() where id = ? and refunded_at is null", [runId]);
  }
}
