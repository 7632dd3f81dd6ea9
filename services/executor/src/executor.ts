// The executor loop: takes tests from the queue, claims them from the runs service, runs their
// steps under a heartbeat-kept lease, reports results. PostgreSQL (through the runs service) is the
// source of truth; the stream only says "look at this test".

import { timestampMs } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import type { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { PlaywrightSpec } from "@testrun/gen/testrun/catalog/v1/playwright_pb";
import {
  ArtifactKind,
  FailureCause,
  type RunsService,
  SkipReason,
  type TestAssignment,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { Logger } from "@testrun/kit";
import { EgressGuard, EgressPolicy } from "@testrun/kit/egress";
import type { Artifact } from "./browser/artifacts.js";
import { BrowserLost, type BrowserPool, BrowserUnavailable } from "./browser/pool.js";
import { failureCauses } from "./causes.js";
import type { TestKinds } from "./kinds.js";
import { stepKindOf, testsExecuted } from "./metrics.js";
import { runSpec, type SpecRunOptions, type SpecStepOutcome } from "./playwright/run-spec.js";
import type { QueueEntry, TestQueue } from "./queue.js";
import { checkReachable, type Reachability } from "./steps/reachability.js";
import {
  defaultTraceMaxBytes,
  oneLine,
  runSteps,
  type StepOutcome,
  type TestOutcome,
} from "./steps/runner.js";
import { Variables } from "./steps/variables.js";
import { type BatchValues, VariableReader } from "./variable-values.js";

export interface ExecutorOptions {
  queue: TestQueue;
  runs: Client<typeof RunsService>;
  catalog: Client<typeof CatalogService>;
  logger: Logger;
  /** Stable name of this process, e.g. the pod name; a slot number is appended per test. */
  name: string;
  /** Tests run at the same time. */
  concurrency: number;
  /** The runs service's lease: heartbeats every third of it; queue entries idle longer are taken over. */
  leaseMs: number;
  /** How long the reachability check of a run's base URL waits for an answer. */
  reachabilityTimeoutMs: number;
  /**
   * What every connection to an environment goes through (the reachability check and every step).
   * Default: the built-in blocks only (docs/runs.md, "Egress"); main.ts passes the configured one.
   */
  egress?: EgressGuard;
  /** How much of a step's response body is read (default 1 MiB). */
  responseMaxBytes?: number;
  /** A test's overall deadline besides its steps' timeouts (default 10 minutes). */
  testDeadlineMs?: number;
  /** How long one blocking read of the queue waits (bounds how late a stop is noticed). */
  readBlockMs?: number;
  /** The browser of browser steps (one Chromium, BROWSER_CONTEXTS contexts); without it they fail. */
  browsers?: BrowserPool;
  /** The largest zipped Playwright trace kept (BROWSER_TRACE_MAX_BYTES; default 32 MiB). */
  traceMaxBytes?: number;
  /** The kinds of test taken now (the queue reads only theirs): while none is, nothing is read. */
  kinds?: TestKinds;
  /**
   * Told when a test's browser could not be started (browser/probe.ts): browser tests are taken no
   * more until it starts again. The test itself is handed back.
   */
  browserUnavailable?: (error: BrowserUnavailable) => void;
  /**
   * How a Playwright spec case's runner starts its chromium (the browser pool's binary, flags and
   * egress proxy: wiring.ts) and itself (`launch`: the sandbox where available). Without it, a
   * spec test fails saying this executor cannot run specs.
   */
  specs?: Pick<SpecRunOptions, "chromiumPath" | "chromiumArgs" | "proxy" | "launch">;
}

/** A lease this executor holds: what HeartbeatLeases extends, and what stops the test when it is lost. */
interface HeldLease {
  testResultId: string;
  leaseToken: string;
  /** Its queue entry, touched at each beat so that it is not taken over. */
  entryId: string;
  work: AbortController;
}

/** How one claim of a batch went: the assignment, or the code ClaimTest would have failed with. */
interface Claimed {
  assignment?: TestAssignment;
  code: Code;
}

/** Why a running test was interrupted. */
class Interrupted extends Error {
  constructor(readonly why: "lease lost" | "shutting down") {
    super(why);
  }
}

/** For text already redacted (a spec step's name and error): made one line of 300 at most. */
const noVariables = new Variables({});
const codeOf = (error: unknown) => ConnectError.from(error).code;
/** ClaimTests' most claims in one call (runs.proto), and so GetVariableValuesBatch's most tests. */
const maxClaims = 100;
/** The claim is not (or no longer) ours to work on: someone else holds it, or the test is final. */
const notOursCodes = [Code.Aborted, Code.FailedPrecondition, Code.NotFound];
const notOurs = (error: unknown) => notOursCodes.includes(codeOf(error));

/** Repeats a call that failed because the other service was briefly unavailable (3 tries in all). */
async function retry<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const transient = [Code.Unavailable, Code.DeadlineExceeded].includes(codeOf(error));
      if (!transient || attempt >= 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, 300 * attempt));
    }
  }
}

/**
 * A third of the lease: the configured one, or the one this claim was granted if shorter (the runs
 * service decides; a clock difference only makes the beats more frequent).
 */
function heartbeatEvery(assignment: TestAssignment, leaseMs: number): number {
  const granted = assignment.leaseExpiresAt ? timestampMs(assignment.leaseExpiresAt) - Date.now() : leaseMs;
  return Math.max(200, Math.floor(Math.min(leaseMs, granted > 0 ? granted : leaseMs) / 3));
}

export class Executor {
  readonly #o: ExecutorOptions;
  readonly #egress: EgressGuard;
  readonly #inFlight = new Map<Promise<void>, AbortController>();
  readonly #freeSlots: number[];
  /** Per run: the one reachability check of its base URL this process makes. */
  readonly #reachability = new Map<string, Promise<Reachability>>();
  #stopping = false;
  readonly #stopRequested = Promise.withResolvers<void>();
  #loop: Promise<void> | undefined;
  #nextTakeOver = 0;
  /** The leases held now, by test: one HeartbeatLeases call a beat extends them all. */
  readonly #leases = new Map<string, HeldLease>();
  #beat: NodeJS.Timeout | undefined;
  #beatMs = Number.POSITIVE_INFINITY;
  #beating = false;
  /** The runs service answered ClaimTests or HeartbeatLeases UNIMPLEMENTED (older, during a rolling update). */
  #oneByOne = false;
  readonly #variables: VariableReader;

  constructor(options: ExecutorOptions) {
    this.#o = options;
    this.#egress = options.egress ?? new EgressGuard(new EgressPolicy());
    this.#freeSlots = Array.from({ length: options.concurrency }, (_, i) => options.concurrency - i);
    this.#variables = new VariableReader(options.catalog, retry);
    // A kind taken again (or for the first time): what dead executors left of it is looked for at
    // the next read, not half a lease later.
    options.kinds?.onChange(() => {
      this.#nextTakeOver = 0;
    });
  }

  /** Test slots busy and free now (the metrics' gauge). */
  get slots(): { busy: number; free: number } {
    const free = this.#freeSlots.length;
    return { busy: this.#o.concurrency - free, free };
  }

  start(): void {
    this.#loop = this.#run();
  }

  /**
   * Stops reading new work, lets tests in flight finish until `deadlineMs`, then hands the rest
   * back to the runs service (ReleaseTest) and resolves when nothing is in flight.
   */
  async stop(deadlineMs: number): Promise<void> {
    this.#stopping = true;
    this.#stopRequested.resolve();
    this.#o.queue.closeReader();
    await this.#loop;
    if (this.#inFlight.size > 0) {
      this.#o.logger.info({ tests: this.#inFlight.size }, "waiting for tests in flight");
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, deadlineMs);
      });
      await Promise.race([Promise.all(this.#inFlight.keys()), deadline]);
      clearTimeout(timer);
      for (const controller of this.#inFlight.values()) controller.abort(new Interrupted("shutting down"));
      await Promise.all(this.#inFlight.keys());
    }
    clearInterval(this.#beat);
    this.#beat = undefined;
  }

  async #run(): Promise<void> {
    const { logger } = this.#o;
    let failures = 0;
    while (!this.#stopping) {
      try {
        if (this.#freeSlots.length === 0) {
          await Promise.race([...this.#inFlight.keys(), this.#stopRequested.promise]);
          continue;
        }
        const { kinds } = this.#o;
        if (kinds && kinds.taken.length === 0) {
          // Nothing this executor can run now (a browser pool whose browser does not start).
          await Promise.race([kinds.changed(), this.#stopRequested.promise]);
          continue;
        }
        const entries = await this.#nextEntries(Math.min(this.#freeSlots.length, maxClaims));
        await this.#claimAndStart(entries);
        failures = 0;
      } catch (err) {
        if (this.#stopping) break; // the read was cut short on purpose
        // Redis or the network is down: say so once a while, and retry with a growing pause.
        failures++;
        if (failures === 1 || failures % 30 === 0) logger.error({ err }, "reading the test queue failed");
        await this.#pause(Math.min(5_000, 200 * 2 ** Math.min(failures, 5)));
      }
    }
  }

  /** Waits `ms`, or less when a stop is requested meanwhile. */
  async #pause(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise((resolve) => {
        timer = setTimeout(resolve, ms);
      }),
      this.#stopRequested.promise,
    ]);
    clearTimeout(timer);
  }

  async #nextEntries(count: number): Promise<QueueEntry[]> {
    const { queue, leaseMs } = this.#o;
    if (Date.now() >= this.#nextTakeOver) {
      this.#nextTakeOver = Date.now() + leaseMs / 2;
      // A quarter more than the lease: the entry's idle time and the lease restart at the same beat,
      // so by then the lease has surely lapsed and the claim is not refused as still held.
      const orphans = await queue.takeOver(count, Math.ceil(leaseMs * 1.25));
      if (orphans.length > 0) {
        this.#o.logger.info({ entries: orphans.length }, "took over tests of a stopped executor");
        return orphans;
      }
    }
    // While a kind's first check is under way (its browser launching), short reads: its stream is
    // read as soon as it is taken, not after a read of the others has waited its whole time.
    const blockMs = this.#o.readBlockMs ?? 2_000;
    return queue.read(count, this.#o.kinds?.checking ? Math.min(100, blockMs) : blockMs);
  }

  /**
   * Claims the tests of `entries` in one ClaimTests call (one slot each) and starts those
   * claimed. The others' entries are acknowledged when the test is not ours to run (someone else
   * holds it, it is final, or its project holds its share of the executors while others wait: it
   * stays QUEUED and is published again later), and left pending otherwise (the runs service
   * unavailable: taken over once idle for a lease).
   */
  async #claimAndStart(entries: QueueEntry[]): Promise<void> {
    const { queue, logger } = this.#o;
    const ack = (entry: QueueEntry) =>
      queue
        .ack(entry.id)
        .catch((err: unknown) => logger.error({ err, entry: entry.id }, "test handling failed"));
    const valid: { entry: QueueEntry; testResultId: string; slot: number }[] = [];
    for (const entry of entries) {
      if (entry.dispatch) {
        valid.push({ entry, testResultId: entry.dispatch.testResultId, slot: this.#freeSlots.pop() ?? 0 });
        continue;
      }
      // Logged once acknowledged, so whoever reads the log sees the queue as it now is.
      await ack(entry);
      logger.warn({ entry: entry.id }, "dropped a malformed queue entry");
    }
    if (valid.length === 0) return;
    let outcomes: Claimed[];
    try {
      outcomes = await this.#claim(
        valid.map(({ testResultId, slot }) => ({ testResultId, executorId: `${this.#o.name}/${slot}` })),
      );
    } catch (err) {
      // The runs service unavailable, say: the entries stay pending, taken over once idle for a lease.
      for (const { entry, slot } of valid) {
        this.#freeSlots.push(slot);
        logger.error({ err, entry: entry.id }, "test handling failed");
      }
      return;
    }
    // The claimed tests' variable values are read together, when the first of them needs its own.
    const values = this.#variables.batch(
      outcomes.flatMap(({ assignment }) => (assignment ? [assignment] : [])),
    );
    for (const [index, { entry, testResultId, slot }] of valid.entries()) {
      const { assignment, code } = outcomes[index] ?? { code: Code.Unknown };
      if (assignment) {
        this.#startTest(entry, slot, assignment, values);
        continue;
      }
      this.#freeSlots.push(slot);
      if (code === Code.ResourceExhausted)
        logger.debug({ testResultId }, "claim deferred: the project holds its share of the executors");
      if (code === Code.ResourceExhausted || notOursCodes.includes(code)) await ack(entry);
    }
  }

  /** ClaimTests, or ClaimTest per test from a runs service that does not serve it yet. */
  async #claim(claims: { testResultId: string; executorId: string }[]): Promise<Claimed[]> {
    const { runs } = this.#o;
    if (!this.#oneByOne) {
      try {
        const { outcomes } = await runs.claimTests({ claims });
        return outcomes.map((outcome) => ({ assignment: outcome.assignment, code: outcome.code as Code }));
      } catch (error) {
        if (codeOf(error) !== Code.Unimplemented) throw error;
        this.#oneByOne = true;
      }
    }
    const claimed: Claimed[] = [];
    for (const claim of claims) {
      try {
        const { assignment } = await runs.claimTest(claim);
        if (!assignment) throw new Error("ClaimTest answered without an assignment");
        claimed.push({ assignment, code: Code.Unknown });
      } catch (error) {
        const code = codeOf(error);
        if (code !== Code.ResourceExhausted && !notOursCodes.includes(code)) throw error;
        claimed.push({ code });
      }
    }
    return claimed;
  }

  #startTest(entry: QueueEntry, slot: number, assignment: TestAssignment, values: BatchValues): void {
    const controller = new AbortController();
    const task = this.#handle(entry, assignment, values, controller.signal)
      .catch((err: unknown) => this.#o.logger.error({ err, entry: entry.id }, "test handling failed"))
      .finally(() => {
        this.#inFlight.delete(task);
        this.#freeSlots.push(slot);
      });
    this.#inFlight.set(task, controller);
  }

  /** Keeps a lease: the executor's one heartbeat extends it from now on (beats a third of the shortest lease). */
  #hold(lease: HeldLease, everyMs: number): void {
    this.#leases.set(lease.testResultId, lease);
    if (this.#beat && everyMs >= this.#beatMs) return;
    clearInterval(this.#beat);
    this.#beatMs = Math.min(everyMs, this.#beatMs);
    this.#beat = setInterval(() => void this.#heartbeat(), this.#beatMs);
  }

  /**
   * One beat for every lease held: their queue entries touched (one round trip) and their leases
   * extended in one HeartbeatLeases call; a test whose lease is lost is stopped.
   */
  async #heartbeat(): Promise<void> {
    if (this.#beating || this.#leases.size === 0) return;
    this.#beating = true;
    const held = [...this.#leases.values()];
    const { queue, runs, logger } = this.#o;
    const lost = (testResultId: string) => {
      const lease = held.find((h) => h.testResultId === testResultId);
      // Only if still the same claim (the test may have ended, or been claimed again, meanwhile).
      if (lease && this.#leases.get(testResultId) === lease) lease.work.abort(new Interrupted("lease lost"));
    };
    try {
      void queue.touchAll(held.map((lease) => lease.entryId)).catch(() => {});
      const leases = held.map(({ testResultId, leaseToken }) => ({ testResultId, leaseToken }));
      if (!this.#oneByOne) {
        try {
          for (const testResultId of (await runs.heartbeatLeases({ leases })).lost) lost(testResultId);
          return;
        } catch (error) {
          if (codeOf(error) !== Code.Unimplemented) throw error;
          this.#oneByOne = true;
        }
      }
      await Promise.all(
        leases.map((lease) =>
          runs.heartbeatTest(lease).catch((error: unknown) => {
            if (!notOurs(error)) throw error;
            lost(lease.testResultId);
          }),
        ),
      );
    } catch (error) {
      logger.warn({ code: Code[codeOf(error)] }, "heartbeat failed; retrying at the next beat");
    } finally {
      this.#beating = false;
    }
  }

  async #handle(
    entry: QueueEntry,
    assignment: TestAssignment,
    values: BatchValues,
    stop: AbortSignal,
  ): Promise<void> {
    const { queue, logger } = this.#o;
    const ack = () => queue.ack(entry.id);
    const { testResultId } = assignment;
    const log = logger.child({ testResultId, runId: assignment.runId, attempt: assignment.attempt });
    log.debug("test claimed");

    // The executor's heartbeat keeps the lease (and the queue entry) ours; losing it stops the test.
    const work = new AbortController();
    const onStop = () => work.abort(stop.reason);
    stop.addEventListener("abort", onStop, { once: true });
    const lease = { testResultId, leaseToken: assignment.leaseToken };
    const held: HeldLease = { ...lease, entryId: entry.id, work };
    this.#hold(held, heartbeatEvery(assignment, this.#o.leaseMs));

    try {
      if (assignment.playwright && this.#o.kinds && !this.#o.kinds.takes("spec")) {
        // A spec read from another kind's stream (a runs service from before specs had a stream of
        // their own published it there): not this executor's to fail, so handed back, for one that
        // runs specs.
        await this.#handBack(lease, "this executor does not run Playwright specs");
        log.info("Playwright spec handed back: this executor does not run specs");
        return ack();
      }
      const outcome = await this.#execute(assignment, values, log, work.signal);
      if (outcome === "skipped") {
        testsExecuted.inc({ status: "skipped", step_kind: stepKindOf(assignment) });
        return ack();
      }
      await this.#complete(assignment, outcome, log);
      testsExecuted.inc({ status: outcome.passed ? "passed" : "failed", step_kind: stepKindOf(assignment) });
      return ack();
    } catch (error) {
      if (error instanceof BrowserUnavailable) {
        // Not the test's fault, and no result: it goes back to the queue for an executor that can
        // run it (or, past the dispatch deadline, is skipped saying why none here can).
        this.#o.browserUnavailable?.(error);
        await this.#handBack(lease, "the executor's browser could not be started");
        log.warn({ cause: error.message }, "test handed back: its browser could not be started");
        return ack();
      }
      if (error instanceof BrowserLost) {
        // The browser died, not the test: an attempt FAILED with the system's cause BROWSER, which
        // the runs service retries without using the test's retries, up to MAX_ATTEMPTS (a page
        // that crashes the browser every time ends FAILED, saying so), and never calls flaky.
        log.warn("the browser crashed under the test; reported as the system's failure, to be run again");
        await this.#complete(
          assignment,
          {
            passed: false,
            summary: "the browser crashed while the test ran (the system's fault)",
            durationMs: 0,
            failedStep: 0,
            cause: "browser",
            steps: [],
            artifacts: [],
          },
          log,
        );
        return ack();
      }
      if (!(error instanceof Interrupted)) throw error;
      if (error.why === "shutting down") {
        await this.#handBack(lease, "executor shutting down");
        log.info("test handed back");
      } else {
        log.warn("lease lost; another executor took the test over or it was cancelled");
      }
      return ack();
    } finally {
      values.done(testResultId);
      if (this.#leases.get(testResultId) === held) this.#leases.delete(testResultId);
      if (this.#leases.size === 0) {
        // Nothing to keep: no beat until the next claim (no timer left behind by an idle executor).
        clearInterval(this.#beat);
        this.#beat = undefined;
        this.#beatMs = Number.POSITIVE_INFINITY;
      }
      stop.removeEventListener("abort", onStop);
    }
  }

  /** Gives a claimed test back to the runs service (ReleaseTest), unless it is no longer this executor's. */
  async #handBack(lease: { testResultId: string; leaseToken: string }, reason: string): Promise<void> {
    await this.#o.runs.releaseTest({ ...lease, reason }).catch((e: unknown) => {
      if (!notOurs(e)) throw e;
    });
  }

  /** Checks the environment (once per run), fetches the variables (with its batch's), runs the steps. */
  async #execute(assignment: TestAssignment, batch: BatchValues, log: Logger, signal: AbortSignal) {
    const { runs } = this.#o;
    const reachability = await this.#checkOnce(assignment);
    signal.throwIfAborted();
    if (!reachability.reachable) {
      try {
        await runs.skipRun({
          runId: assignment.runId,
          testResultId: assignment.testResultId,
          leaseToken: assignment.leaseToken,
          reason: SkipReason.ENVIRONMENT_UNREACHABLE,
          // An error's message can be any length or span lines: a summary is one line of 300 at most.
          summary: oneLine(`environment unreachable: ${reachability.reason}`, new Variables({})),
        });
        // The cause (EGRESS_REFUSED, ECONNREFUSED, …) is for operators; the summary never says it.
        log.info({ cause: reachability.cause }, "run skipped: environment unreachable");
        return "skipped" as const;
      } catch (error) {
        // A test of the run already passed or failed: the run is executing, so this test runs too.
        if (codeOf(error) !== Code.FailedPrecondition) {
          if (notOurs(error)) throw new Interrupted("lease lost");
          throw error;
        }
      }
    }
    let values: Record<string, string>;
    try {
      values = await batch.of(assignment);
    } catch (error) {
      // Bounded and visible beats a test handed around for ever: the test fails and says why.
      const code = Code[codeOf(error)].replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
      return {
        passed: false,
        summary: `could not read the project's variables (${code})`,
        durationMs: 0,
        failedStep: 0, // before any step ran
        steps: [],
        artifacts: [],
      } satisfies TestOutcome;
    }
    const outcome = assignment.playwright
      ? await this.#runSpec(assignment, assignment.playwright, values, signal)
      : await runSteps(assignment.steps, {
          baseUrl: assignment.baseUrl,
          variables: values,
          signal,
          maxBodyBytes: this.#o.responseMaxBytes,
          deadlineMs: this.#o.testDeadlineMs ?? 10 * 60_000,
          egress: this.#egress,
          browsers: this.#o.browsers,
          project: assignment.projectId,
          recordTrace: assignment.recordTrace,
          traceMaxBytes: this.#o.traceMaxBytes,
        });
    // The base URL did not answer the run's check and a step then could not reach it: the
    // environment, not the step (docs/runs.md, "Why a test failed").
    if (!reachability.reachable && outcome.cause === "network") outcome.cause = "environment_unreachable";
    return outcome;
  }

  /** A Playwright spec case: its runner in a child process, one step result per `test()`. */
  async #runSpec(
    assignment: TestAssignment,
    spec: PlaywrightSpec,
    variables: Record<string, string>,
    signal: AbortSignal,
  ): Promise<TestOutcome> {
    const specs = this.#o.specs;
    if (!specs)
      return {
        passed: false,
        summary: "this executor does not run Playwright specs (PLAYWRIGHT_SPECS is off: docs/security.md)",
        durationMs: 0,
        failedStep: 0,
        cause: "browser",
        steps: [],
        artifacts: [],
      };
    const outcome = await runSpec(spec, {
      ...specs,
      baseUrl: assignment.baseUrl,
      variables,
      deadlineMs: this.#o.testDeadlineMs ?? 10 * 60_000,
      signal,
      recordTrace: assignment.recordTrace,
      traceMaxBytes: this.#o.traceMaxBytes ?? defaultTraceMaxBytes,
    });
    // The lease was lost or the executor stops (the runner was killed with it): no result.
    signal.throwIfAborted();
    return outcome;
  }

  #checkOnce(assignment: TestAssignment): Promise<Reachability> {
    let check = this.#reachability.get(assignment.runId);
    if (!check) {
      check = checkReachable(assignment.baseUrl, this.#egress, this.#o.reachabilityTimeoutMs);
      this.#reachability.set(assignment.runId, check);
      // Remember recent runs only; a run forgotten here is at worst checked again.
      if (this.#reachability.size > 1_000) {
        const oldest = this.#reachability.keys().next().value;
        if (oldest !== undefined) this.#reachability.delete(oldest);
      }
    }
    return check;
  }

  /**
   * Hands the test's artifacts to the runs service under the claim, before the result: one refused
   * (too large, past the run's cap) or failing is logged (what it was, never its content) and the
   * result is reported all the same.
   */
  async #putArtifacts(assignment: TestAssignment, artifacts: Artifact[], log: Logger): Promise<void> {
    for (const artifact of artifacts) {
      try {
        await retry(() =>
          this.#o.runs.putArtifact({
            testResultId: assignment.testResultId,
            leaseToken: assignment.leaseToken,
            kind: artifact.kind,
            name: artifact.name,
            contentType: artifact.contentType,
            content: artifact.content,
            step: artifact.step,
          }),
        );
      } catch (error) {
        log.warn(
          {
            code: Code[codeOf(error)],
            artifact: { kind: ArtifactKind[artifact.kind], name: artifact.name, step: artifact.step },
            sizeBytes: artifact.content.byteLength,
          },
          "artifact not stored",
        );
        // The claim is gone: CompleteTest will say so too; the other artifacts would be refused.
        if (notOurs(error)) return;
      }
    }
  }

  async #complete(assignment: TestAssignment, outcome: TestOutcome, log: Logger): Promise<void> {
    await this.#putArtifacts(assignment, outcome.artifacts, log);
    const request = {
      testResultId: assignment.testResultId,
      leaseToken: assignment.leaseToken,
      status: outcome.passed ? TestStatus.PASSED : TestStatus.FAILED,
      summary: outcome.summary,
      durationMs: BigInt(outcome.durationMs),
      failedStep: outcome.failedStep,
      cause: outcome.passed ? FailureCause.UNSPECIFIED : failureCauses[outcome.cause ?? "assertion"],
      stepResults: outcome.steps.map((step: StepOutcome & Partial<SpecStepOutcome>) => ({
        number: step.number,
        status: step.skipped ? TestStatus.SKIPPED : step.passed ? TestStatus.PASSED : TestStatus.FAILED,
        durationMs: BigInt(step.durationMs),
        // A spec's `test()`: its title and redacted error (run-spec.ts), each one line of 300 at most.
        name: step.name === undefined ? "" : oneLine(step.name, noVariables),
        error: step.error === undefined || step.passed ? "" : oneLine(step.error, noVariables),
      })),
    };
    try {
      // Completion is idempotent per lease token, so an unanswered call is simply repeated.
      const response = await retry(() => this.#o.runs.completeTest(request));
      // At debug, like the claim: nothing per test at info (a run's end is logged once, by runs).
      log.debug(
        {
          status: TestStatus[request.status],
          durationMs: outcome.durationMs,
          runFinished: response.runFinished,
        },
        "test completed",
      );
    } catch (error) {
      if (!notOurs(error)) throw error;
      log.warn({ code: Code[codeOf(error)] }, "result discarded by the runs service");
    }
  }
}
