import { defineEntity, p } from "@mikro-orm/core";

/**
 * A project's credit balance. Redundant with the ledger by design: it is what the atomic spend
 * (`update … where balance >= n`) locks and checks, and it always equals the sum of the ledger.
 */
export const Balance = defineEntity({
  name: "Balance",
  tableName: "balances",
  properties: {
    projectId: p.string().primary(),
    balance: p.bigint("number").default(0),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  checks: [{ name: "balances_not_negative", expression: "balance >= 0" }],
});

/**
 * Every change of a balance, never updated or deleted. `runId` + `kind` is unique, which makes a
 * run's charge and refund idempotent; a grant's `idempotencyKey` (unique per project) does the same
 * for operator grants.
 */
export const LedgerEntry = defineEntity({
  name: "LedgerEntry",
  tableName: "ledger_entries",
  properties: {
    id: p.string().primary(),
    projectId: p.string().index(),
    kind: p.enum(["grant", "charge", "refund"]),
    /** Signed: grants and refunds are positive, charges negative. */
    amount: p.bigint("number"),
    runId: p.string().nullable(),
    idempotencyKey: p.string().nullable(),
    reason: p.text().default(""),
    /** The project's balance right after this entry: the ledger reads as a statement. */
    balanceAfter: p.bigint("number"),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  uniques: [{ properties: ["runId", "kind"] }, { properties: ["projectId", "idempotencyKey"] }],
});

/**
 * Runs closed to charges: a refund was asked for them before any charge had landed. That happens
 * when the runs service gave up a start (its charge was slow or lost); a charge of the run arriving
 * later is refused, so the credits are neither taken for a run that no longer exists nor lost. Not
 * a ledger entry: the balance does not change.
 */
export const VoidedRun = defineEntity({
  name: "VoidedRun",
  tableName: "voided_runs",
  properties: {
    runId: p.string().primary(),
    projectId: p.string(),
    /** The reason of the refund that voided the run. */
    reason: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export const entities = [Balance, LedgerEntry, VoidedRun];
