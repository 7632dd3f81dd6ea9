// Whether this executor can run browser tests: its browser must launch (docs/runs.md, "Kinds no
// executor can run"). Checked at start, through the pool's own launch (the browser then stays up
// for the first test), and again whenever a launch fails later (the browser crashed and would not
// start again): until a check passes, browser tests are not taken (kinds.ts), and the check is
// repeated, backing off from `minDelayMs` to `maxDelayMs`, so that a browser installed meanwhile
// (or memory freed) is noticed without a restart.
import type { TestKinds } from "../kinds.js";
import { BrowserUnavailable, launchFailure } from "./pool.js";

/** What the probe needs of the pool: its launch. */
interface Launcher {
  launch(): Promise<void>;
}

export class BrowserProbe {
  #timer: NodeJS.Timeout | undefined;
  #checking: Promise<void> | undefined;
  #delayMs: number;
  #stopped = false;

  constructor(
    private readonly pool: Launcher,
    private readonly kinds: TestKinds,
    private readonly options: { minDelayMs: number; maxDelayMs: number } = {
      minDelayMs: 1_000,
      maxDelayMs: 60_000,
    },
  ) {
    this.#delayMs = options.minDelayMs;
  }

  /** Checks now; resolves once this first check is done (either way). */
  start(): Promise<void> {
    return this.#check();
  }

  /**
   * A test's browser could not be started (BrowserUnavailable): browser tests are no longer taken,
   * and the checks start again.
   */
  failed(error: BrowserUnavailable): void {
    if (this.#stopped) return;
    this.kinds.unavailable("browser", error.message, error.cause ?? error);
    if (!this.#checking && !this.#timer) this.#schedule();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #check(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#checking ??= this.pool
      .launch()
      .then(
        () => {
          this.#delayMs = this.options.minDelayMs;
          this.kinds.available("browser");
        },
        (error: unknown) => {
          if (this.#stopped) return;
          const cause = error instanceof BrowserUnavailable ? error.message : launchFailure(error);
          this.kinds.unavailable("browser", cause, error instanceof Error ? (error.cause ?? error) : error);
          this.#schedule();
        },
      )
      .finally(() => {
        this.#checking = undefined;
      });
    return this.#checking;
  }

  #schedule(): void {
    if (this.#stopped) return;
    const delayMs = this.#delayMs;
    this.#delayMs = Math.min(this.options.maxDelayMs, this.#delayMs * 2);
    this.#timer = setTimeout(() => void this.#check(), delayMs);
    // The process's end is never held by a retry: the executor's stop ends it anyway.
    this.#timer.unref();
  }
}
