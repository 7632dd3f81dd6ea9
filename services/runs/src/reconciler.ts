import { type BackgroundLoop, startLoop, type TestKind, testKinds } from "@testrun/kit";
import type { Logger } from "pino";
import type { Credits } from "./credits.js";
import type { Dispatch, Dispatcher } from "./dispatcher.js";
import type { ExecutorKinds } from "./executor-kinds.js";
import { reportFinished } from "./finished.js";
import type { HealthStore } from "./health/store.js";
import { leaseLapses, reconcilerRepairs } from "./metrics.js";
import type { RunEvents } from "./run-events.js";
import type { ReconcileStore } from "./store/reconcile.js";

export interface ReconcilerOptions {
  intervalMs: number;
  /** How long a start may stay pending before it counts as crashed. */
  startGraceMs: number;
  /** How long a published, unclaimed test waits before it is published again (then backs off). */
  republishMs: number;
  /** How long a test may stay QUEUED (or a lapsed lease untaken) before nothing is expected to take it. */
  dispatchDeadlineMs: number;
}

/** Rows handled per kind of work per pass; the next pass continues. */
const batch = 500;

/**
 * Repairs what crashes and lost messages leave behind, from PostgreSQL (the source of truth):
 * starts that never completed are refunded and removed, refunds not yet confirmed are retried,
 * QUEUED tests nobody claimed and tests whose lease lapsed are published again, tests QUEUED past
 * the dispatch deadline while no executor is at work on their kind are SKIPPED (no_executor; their
 * summary says why none here can run them when the executors said: executor-kinds.ts), and tests
 * whose leases lapsed too often FAIL.
 * Every step is idempotent, so replicas may reconcile at the same time.
 */
export class Reconciler {
  private loop: BackgroundLoop | undefined;

  constructor(
    private readonly store: ReconcileStore,
    private readonly credits: Credits,
    private readonly dispatcher: Dispatcher,
    private readonly events: RunEvents,
    private readonly options: ReconcilerOptions,
    private readonly logger: Logger,
    /** What the executors say of each kind: read at each pass (also for the reads' waiting_for). */
    private readonly kinds?: ExecutorKinds,
    /** Test health: quarantines past their expiry are ended, histories past retention pruned. */
    private readonly health?: HealthStore,
  ) {}

  /** Runs a pass now, then one every interval, each after the previous ended. */
  start(): void {
    const { intervalMs } = this.options;
    this.loop = startLoop({ name: "reconciler", intervalMs, pass: () => this.pass(), logger: this.logger });
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
  }

  async pass(): Promise<void> {
    try {
      for (const start of await this.store.unfinishedStarts(this.options.startGraceMs, batch)) {
        const outcome = await this.credits.undoStart(start.id, start.project_id, start.total_tests);
        if (outcome === "undone") {
          reconcilerRepairs.inc({ kind: "start_undone" });
          this.logger.info({ runId: start.id }, "crashed start refunded and removed");
        }
      }
      for (const runId of await this.store.unsettledRefunds(batch)) {
        await this.credits.settle(runId);
        reconcilerRepairs.inc({ kind: "refund_retried" });
      }

      if (this.health) {
        const expired = await this.health.expireDue(batch);
        if (expired > 0) this.logger.info({ expired }, "quarantines expired");
        await this.health.pruneHistory(batch);
      }
      await this.kinds?.refresh();
      const republish: Dispatch[] = [];
      // A backlog behind busy executors (a 500-test run on one pod) may wait longer than the
      // deadline; only while no executor is at work on tests of its kind (separate pools take
      // separate kinds) does waiting mean nobody will take a test.
      const { dispatchDeadlineMs } = this.options;
      const atWork = await this.store.executorsAtWork(dispatchDeadlineMs);
      const deadlines = Object.fromEntries(
        testKinds.map((kind) => [kind, atWork[kind] ? null : dispatchDeadlineMs]),
      ) as Record<TestKind, number | null>;
      const work = await this.store.pendingWork(this.options.republishMs, deadlines, batch);
      for (const item of work) {
        const outcome = await this.store.reconcileTest(
          item.id,
          this.options.republishMs,
          deadlines[item.kind],
          this.kinds?.skipSummary(item.kind),
        );
        if (outcome.repair) reconcilerRepairs.inc({ kind: outcome.repair });
        // Giving a test up ends a lease that lapsed (a timed-out one too: it lapsed, untaken).
        if (outcome.repair === "given_up" || outcome.repair === "timed_out") leaseLapses.inc();
        reportFinished(outcome.effects, this.logger);
        if (outcome.settled) await this.events.changed(item.run_id);
        if (outcome.republish)
          republish.push({
            testResultId: item.id,
            runId: item.run_id,
            projectId: item.project_id,
            kind: item.kind,
          });
        if (outcome.effects.refundRunId) await this.credits.settle(outcome.effects.refundRunId);
      }
      if (republish.length > 0) {
        await this.dispatcher.publish(republish);
        reconcilerRepairs.inc({ kind: "redispatched" }, republish.length);
        this.logger.info({ tests: republish.length }, "tests published again");
      }
    } catch (err) {
      this.logger.error({ err }, "reconciler pass failed; the next one retries");
    }
  }
}
