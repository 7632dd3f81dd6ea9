// Credits (BillingService).
import { randomUUID } from "node:crypto";
import type { GrantCreditsResponse, LedgerEntry } from "@testrun/gen/testrun/billing/v1/billing_pb";
import type { CliContext } from "../context.js";

export interface GrantCreditsInput {
  projectId: string;
  amount: number;
  reason: string;
  /**
   * Makes a retry safe: a second grant with the same key adds nothing. Pass something stable (an
   * invoice number); when omitted a random one is used, so a retried command grants again.
   */
  idempotencyKey?: string;
}

export function grantCredits(ctx: CliContext, input: GrantCreditsInput): Promise<GrantCreditsResponse> {
  return ctx.billing.grantCredits({
    actor: ctx.actor,
    projectId: input.projectId,
    amount: BigInt(input.amount),
    reason: input.reason,
    idempotencyKey: input.idempotencyKey ?? randomUUID(),
  });
}

export async function getBalance(ctx: CliContext, input: { projectId: string }): Promise<bigint> {
  const { balance } = await ctx.billing.getBalance({ actor: ctx.actor, projectId: input.projectId });
  return balance;
}

/** Ledger entries, newest first, at most `limit` of them (following pages), optionally of one run. */
export async function listLedger(
  ctx: CliContext,
  input: { projectId: string; limit: number; runId?: string },
): Promise<LedgerEntry[]> {
  const entries: LedgerEntry[] = [];
  let pageToken = "";
  do {
    const page = await ctx.billing.listLedger({
      actor: ctx.actor,
      projectId: input.projectId,
      pageSize: Math.min(500, input.limit - entries.length),
      pageToken,
      runId: input.runId,
    });
    entries.push(...page.entries);
    pageToken = page.nextPageToken;
  } while (pageToken && entries.length < input.limit);
  return entries.slice(0, input.limit);
}
