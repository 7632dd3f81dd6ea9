import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import {
  type BillingService,
  type LedgerEntry,
  LedgerEntryKind,
  LedgerEntrySchema,
} from "@testrun/gen/testrun/billing/v1/billing_pb";
import { type CatalogService, Permission } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { Actor } from "@testrun/gen/testrun/common/v1/actor_pb";
import { InsufficientCreditsSchema } from "@testrun/gen/testrun/common/v1/errors_pb";
import { counter, requireAccess, requireActor, requireOperator } from "@testrun/kit";
import type { Entry, Ledger, Written } from "./ledger.js";

// Domain metrics (docs/operations.md, "Metrics"): credits, never per project (bounded labels).
const creditsSpent = counter(
  "testrun_credits_spent_total",
  "Credits spent by run starts (refunds subtract nothing here)",
);
const creditsRefunded = counter("testrun_credits_refunded_total", "Credits refunded");

const kinds = {
  grant: LedgerEntryKind.GRANT,
  charge: LedgerEntryKind.CHARGE,
  refund: LedgerEntryKind.REFUND,
};
const maxGrant = 1_000_000_000;

const toProto = (entry: Entry): LedgerEntry =>
  create(LedgerEntrySchema, {
    id: entry.id,
    projectId: entry.projectId,
    kind: kinds[entry.kind],
    amount: BigInt(entry.amount),
    runId: entry.runId ?? undefined,
    reason: entry.reason,
    idempotencyKey: entry.idempotencyKey ?? undefined,
    createdAt: timestampFromDate(entry.createdAt),
    balanceAfter: BigInt(entry.balanceAfter),
  });

const invalid = (message: string) => new ConnectError(message, Code.InvalidArgument);

function requireText(value: string, field: string, max: number): void {
  const length = [...value].length;
  if (length < 1 || length > max) throw invalid(`${field} must be 1 to ${max} characters`);
}

function requireAmount(value: bigint, max = Number.MAX_SAFE_INTEGER): number {
  if (value < 1n || value > BigInt(max)) throw invalid(`amount must be 1 to ${max}`);
  return Number(value);
}

function requireIds(projectId: string, runId: string): void {
  if (!projectId) throw invalid("project_id is required");
  if (!runId) throw invalid("run_id is required");
}

/** Turns a ledger outcome into the response, or into the documented error. */
function answer(outcome: Written, what: string, required = 0): { entry: LedgerEntry; balance: bigint } {
  switch (outcome.kind) {
    case "written":
    case "repeated":
      return { entry: toProto(outcome.entry), balance: BigInt(outcome.balance) };
    case "insufficient":
      throw new ConnectError(
        `not enough credits: ${required} needed, ${outcome.available} available`,
        Code.FailedPrecondition,
        undefined,
        [
          {
            desc: InsufficientCreditsSchema,
            value: { required: BigInt(required), available: BigInt(outcome.available) },
          },
        ],
      );
    case "conflict":
      throw new ConnectError(`${what} was already recorded with other values`, Code.AlreadyExists);
    case "not_charged":
      throw new ConnectError("the run was never charged in this project: nothing to refund", Code.NotFound);
    case "voided":
      throw new ConnectError(
        "the run was refunded before it was charged (its start was given up): it can no longer be charged",
        Code.Aborted,
      );
    case "over_refund":
      throw new ConnectError(
        `a refund cannot exceed the charge of ${outcome.charged}`,
        Code.FailedPrecondition,
      );
  }
}

/**
 * BillingService over the ledger. Actors are authorized by the catalog, which owns projects and
 * roles; charge and refund take no actor: only the runs service calls them.
 */
export function billingService(
  ledger: Ledger,
  catalog: Client<typeof CatalogService>,
): ServiceImpl<typeof BillingService> {
  const authorize = async (actor: Actor | undefined, projectId: string, permission: Permission) => {
    requireActor(actor);
    if (!projectId) throw invalid("project_id is required");
    if (actor?.kind.case === "apiKey")
      throw new ConnectError("API keys cannot read credits", Code.PermissionDenied);
    await requireAccess(catalog, actor, projectId, permission);
  };

  return {
    async getBalance(req) {
      await authorize(req.actor, req.projectId, Permission.READ_SETTINGS);
      return { projectId: req.projectId, balance: BigInt(await ledger.balance(req.projectId)) };
    },

    async grantCredits(req) {
      requireOperator(req.actor);
      const amount = requireAmount(req.amount, maxGrant);
      requireText(req.reason, "reason", 500);
      requireText(req.idempotencyKey, "idempotency_key", 200);
      await authorize(req.actor, req.projectId, Permission.READ_SETTINGS);
      return answer(
        await ledger.grant(req.projectId, amount, req.reason, req.idempotencyKey),
        "this idempotency key",
      );
    },

    async chargeRun(req) {
      requireIds(req.projectId, req.runId);
      const amount = requireAmount(req.amount);
      const outcome = await ledger.charge(req.projectId, req.runId, amount, `run started: ${amount} tests`);
      // A repeated charge (the runs service retrying) spent nothing more.
      if (outcome.kind === "written") creditsSpent.inc(amount);
      return answer(outcome, "the charge of this run", amount);
    },

    async refundRun(req) {
      requireIds(req.projectId, req.runId);
      const amount = requireAmount(req.amount);
      requireText(req.reason, "reason", 500);
      const outcome = await ledger.refund(req.projectId, req.runId, amount, req.reason);
      if (outcome.kind === "written") creditsRefunded.inc(amount);
      return answer(outcome, "the refund of this run");
    },

    async listLedger(req) {
      await authorize(req.actor, req.projectId, Permission.READ_SETTINGS);
      if (req.pageSize < 0) throw invalid("page_size must not be negative");
      if (req.pageToken && !/^led_[0-9a-z]{26}$/.test(req.pageToken))
        throw invalid("page_token is not valid");
      const size = Math.min(req.pageSize || 50, 500);
      // One more than asked tells whether another page follows.
      const entries = await ledger.list(req.projectId, size + 1, req.pageToken || undefined, req.runId);
      const page = entries.slice(0, size);
      return {
        entries: page.map(toProto),
        nextPageToken: entries.length > size ? (page.at(-1)?.id ?? "") : "",
      };
    },
  };
}
