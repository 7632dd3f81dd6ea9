import { type Client, Code, ConnectError } from "@connectrpc/connect";
import type { BillingService } from "@testrun/gen/testrun/billing/v1/billing_pb";
import type { Logger } from "pino";
import type { RefundStore } from "./store/refunds.js";
import type { StartStore } from "./store/starts.js";

/**
 * Gives credits back through billing. Every refund is idempotent per run (billing keys it by run
 * id), and the amount is fixed in our database before it is asked for, so retrying after a crash
 * or an unreachable billing asks for the same thing again.
 */
export class Credits {
  constructor(
    private readonly starts: StartStore,
    private readonly refunds: RefundStore,
    private readonly billing: Client<typeof BillingService>,
    private readonly logger: Logger,
  ) {}

  /** Settles the refund a finished run is due; on failure it stays due, for the reconciler. */
  async settle(runId: string): Promise<void> {
    try {
      const due = await this.refunds.refundDue(runId);
      if (!due) return;
      try {
        await this.billing.refundRun({
          projectId: due.projectId,
          runId,
          amount: BigInt(due.amount),
          reason: due.reason,
        });
      } catch (error) {
        const code = ConnectError.from(error).code;
        // Never charged, or refunded before with another amount: nothing more can be given back,
        // and retrying would fail the same way for ever.
        if (code !== Code.NotFound && code !== Code.AlreadyExists) throw error;
        this.logger.error({ runId, code: Code[code] }, "refund refused by billing; not retried");
      }
      await this.refunds.markRefunded(runId);
    } catch (err) {
      this.logger.warn({ err, runId }, "refund not settled yet; the reconciler retries it");
    }
  }

  /**
   * Undoes a start that did not complete: marks the run abandoned (so it can never become
   * visible), gives back whatever was charged for it and removes it. Answers "started" when the
   * run had in fact been marked charged (it did start), else whether the undo completed; what it
   * could not finish the reconciler finishes.
   */
  async undoStart(runId: string, projectId: string, amount: number): Promise<"started" | "undone" | "left"> {
    try {
      const state = await this.starts.abandon(runId);
      if (state === "charged") return "started";
      if (state === "abandoned") {
        try {
          await this.billing.refundRun({ projectId, runId, amount: BigInt(amount), reason: "start failed" });
        } catch (error) {
          // NOT_FOUND: no charge had landed. Billing has now voided the run, so a charge still on
          // its way is refused rather than kept: nothing to give back, now or later.
          if (ConnectError.from(error).code !== Code.NotFound) throw error;
        }
      }
      await this.starts.deleteUnstarted(runId);
      return "undone";
    } catch (err) {
      this.logger.warn({ err, runId }, "could not undo a failed start yet; the reconciler finishes it");
      return "left";
    }
  }
}
