// The kinds of test this executor takes now (docs/runs.md, "Kinds no executor can run"): those it is
// configured for (EXECUTOR_STEP_KINDS) that it can run. HTTP tests at once; browser tests once its
// browser launched (browser/probe.ts), and not while it cannot start it again; Playwright specs once
// a first sandbox was made (wiring.ts, checkSpecs), or never when they are off. The queue reads only
// the streams of the kinds taken. A kind that cannot be run is said once in the log (and once when
// it can be again), in gRPC health and the metrics (main.ts), and to the runs service (KindReporter),
// which tells users why their tests wait.
import type { Client } from "@connectrpc/connect";
import type { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import {
  type BackgroundLoop,
  kindCause,
  kindReportEveryMs,
  kindTestsName,
  type Logger,
  startLoop,
  type TestKind,
  testKinds,
} from "@testrun/kit";

/**
 * The names gRPC health reports them under (main.ts): `testrun.executor.tests` SERVING while the
 * executor takes any kind of test (the chart's readiness probe asks for it), and one per kind it is
 * configured for, `testrun.executor.tests.<kind>`. The process itself ("") serves regardless.
 */
export const takesTestsHealth = "testrun.executor.tests";
export const kindHealth = (kind: TestKind): string => `${takesTestsHealth}.${kind}`;

/** Not yet checked (a browser being launched for the first time), taken, or not taken and why. */
type State = { is: "unchecked" } | { is: "available" } | { is: "unavailable"; cause: string };

export class TestKinds {
  readonly configured: readonly TestKind[];
  readonly #states = new Map<TestKind, State>();
  readonly #listeners = new Set<() => void>();
  #next = Promise.withResolvers<void>();

  /**
   * @param configured EXECUTOR_STEP_KINDS
   * @param checked the kinds that need a check before they are taken (browser: its launch)
   */
  constructor(
    configured: readonly TestKind[],
    private readonly logger: Logger,
    checked: readonly TestKind[] = ["browser"],
  ) {
    this.configured = [...new Set(configured)];
    for (const kind of this.configured)
      this.#states.set(kind, checked.includes(kind) ? { is: "unchecked" } : { is: "available" });
  }

  /** Whether tests of `kind` are taken now. */
  takes(kind: TestKind): boolean {
    return this.#states.get(kind)?.is === "available";
  }

  /** The kinds taken now, in the configured order. */
  get taken(): TestKind[] {
    return this.configured.filter((kind) => this.takes(kind));
  }

  /** Whether a kind still waits for its first check (the browser's first launch is under way). */
  get checking(): boolean {
    return this.configured.some((kind) => this.#states.get(kind)?.is === "unchecked");
  }

  /** Why a configured kind is not taken, once a check said so. */
  causeOf(kind: TestKind): string | undefined {
    const state = this.#states.get(kind);
    return state?.is === "unavailable" ? state.cause : undefined;
  }

  /** The kind can be run: taken from now on (said in the log when it was not, for a cause, before). */
  available(kind: TestKind): void {
    const before = this.#states.get(kind);
    if (!before || before.is === "available") return;
    this.#states.set(kind, { is: "available" });
    if (before.is === "unavailable") this.logger.info({ kind }, `taking ${kindTestsName[kind]} again`);
    this.#changed();
  }

  /**
   * The kind cannot be run, for `cause` (one line a user may read: no path, no secret); `err`, the
   * operator's detail, goes to the log only. Said once, not at every failed retry.
   */
  unavailable(kind: TestKind, cause: string, err?: unknown): void {
    const before = this.#states.get(kind);
    if (!before) return;
    const line = kindCause(cause);
    if (before.is === "unavailable" && before.cause === line) return;
    this.#states.set(kind, { is: "unavailable", cause: line });
    this.logger.warn({ kind, cause: line, err }, `not taking ${kindTestsName[kind]}: ${line}`);
    this.#changed();
  }

  /** Resolves at the next change of what is taken. */
  changed(): Promise<void> {
    return this.#next.promise;
  }

  /** Calls `listener` at every change; returns what removes it. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(): void {
    const done = this.#next;
    this.#next = Promise.withResolvers<void>();
    done.resolve();
    for (const listener of this.#listeners) listener();
  }
}

/**
 * Reports to the runs service which kinds this executor takes, and why not those it is configured
 * for but cannot run (RunsService.ReportExecutorKinds): at start, at every change, and every
 * `kindReportEveryMs`. The runs service tells users from it why a test waits or was skipped.
 */
export class KindReporter {
  #loop: BackgroundLoop | undefined;
  #stopOnChange: (() => void) | undefined;
  #failing = false;
  /** The report under way, which a withdrawal must follow, not precede. */
  #sending: Promise<void> | undefined;

  constructor(
    private readonly runs: Client<typeof RunsService>,
    private readonly executor: string,
    private readonly kinds: TestKinds,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.#stopOnChange = this.kinds.onChange(() => void this.report());
    const pass = () => this.report();
    this.#loop = startLoop({ name: "kind report", intervalMs: kindReportEveryMs, pass, logger: this.logger });
  }

  /** Reports every kind's state now. Never rejects: a failure is logged once until one succeeds. */
  report(): Promise<void> {
    const sending = this.#send();
    this.#sending = sending;
    return sending;
  }

  async #send(): Promise<void> {
    const kinds = testKinds.map((kind) => ({
      kind,
      configured: this.kinds.configured.includes(kind),
      available: this.kinds.takes(kind),
      cause: this.kinds.causeOf(kind) ?? "",
    }));
    try {
      await this.runs.reportExecutorKinds({ executor: this.executor, kinds });
      if (this.#failing) this.logger.info("the kinds of test taken are reported again");
      this.#failing = false;
    } catch (err) {
      // The runs service down is said by the claims too; this says only that users may be told
      // no cause meanwhile.
      if (!this.#failing) this.logger.warn({ err }, "could not report the kinds of test taken");
      this.#failing = true;
    }
  }

  /**
   * Stops reporting, and withdraws the report (once, best effort): a stopped executor's word would
   * otherwise count for `kindReportTtlMs` more.
   */
  async stop(): Promise<void> {
    await this.#loop?.stop();
    this.#stopOnChange?.();
    await this.#sending;
    await this.runs
      .reportExecutorKinds({ executor: this.executor, kinds: [] }, { timeoutMs: 2_000 })
      .catch(() => {});
  }
}
