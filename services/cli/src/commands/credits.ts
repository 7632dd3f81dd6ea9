// Credits (BillingService).

import { randomUUID } from "node:crypto";
import type { GrantCreditsResponse, LedgerEntry } from "@testrun/gen/testrun/billing/v1/billing_pb";
import type { Command } from "commander";
import { parseId, parseText, parseWholeNumber } from "../arguments.js";
import { type CommandKit, parser } from "../command-kit.js";
import type { CliContext } from "../context.js";
import { jsonText } from "../output.js";
import { ledgerView } from "../views.js";

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

/** testrunctl's `credits` commands. */
export function registerCreditCommands(
  program: Command,
  { io, ctx, leaf, print, projectOption }: CommandKit,
): void {
  // --- credits -------------------------------------------------------------------------------
  const credits = program.command("credits").description("a project's test-run credits (one credit a test)");
  leaf(credits, "grant <amount>", "add credits to a project")
    .addOption(projectOption().makeOptionMandatory())
    .requiredOption("--reason <text>", "why, for the ledger (e.g. an invoice reference)")
    .option(
      "--idempotency-key <key>",
      "makes a retry safe: a second grant with the same key adds nothing (default: a random key, so a retried command grants again)",
    )
    .action(
      async (
        amount: string,
        options: { json?: boolean; project: string; reason: string; idempotencyKey?: string },
      ) => {
        const response = await grantCredits(ctx(), {
          projectId: options.project,
          amount: parseWholeNumber(amount, "the amount", 1, 1_000_000_000),
          reason: parseText(options.reason, "the reason"),
          idempotencyKey: options.idempotencyKey,
        });
        if (options.json) return io.stdout(jsonText(ledgerView.grantJson(response)));
        io.stdout(ledgerView.table(response.entry ? [response.entry] : []));
        io.stderr(`balance now ${response.balance}\n`);
      },
    );
  leaf(credits, "balance", "show a project's balance")
    .addOption(projectOption().makeOptionMandatory())
    .action(async (options: { json?: boolean; project: string }) => {
      const balance = await getBalance(ctx(), { projectId: options.project });
      if (options.json) return io.stdout(jsonText({ projectId: options.project, balance: String(balance) }));
      io.stdout(`${balance}\n`);
    });
  leaf(credits, "ledger", "list a project's ledger entries, newest first")
    .addOption(projectOption().makeOptionMandatory())
    .option(
      "--limit <n>",
      "most entries to show",
      parser((v) => parseWholeNumber(v, "--limit", 1, 100_000)),
      100,
    )
    .option(
      "--run <run-id>",
      "only the entries of this run",
      parser((v) => parseId(v, "run", "the run")),
    )
    .action(async (options: { json?: boolean; project: string; limit: number; run?: string }) => {
      const entries = await listLedger(ctx(), {
        projectId: options.project,
        limit: options.limit,
        runId: options.run,
      });
      print(options, ledgerView, entries, ledgerView.listJson(entries));
    });
}
