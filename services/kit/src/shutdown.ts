import type { Logger } from "pino";

/**
 * What the clean-up gets on top of SHUTDOWN_DRAIN_MS + SHUTDOWN_TIMEOUT_MS: handing back what was
 * cut off (an executor's tests), stopping background loops, closing Redis and the database. It
 * stays under the 5 s that a pod's grace period adds to drain + timeout (docs/architecture.md).
 */
export const shutdownCleanupMs = 3_000;

/**
 * The time a shutdown has left, shared by every step after the drain: each step is raced against
 * one deadline, so a step waiting on a server that no longer answers (PostgreSQL or Redis gone,
 * or hanging) cannot hold the process past it. A step cut short is left running and remembered;
 * the process exits regardless, which closes whatever it held.
 */
export class ShutdownBudget {
  readonly #deadline: number;
  readonly #logger: Logger;
  readonly #unfinished: string[] = [];

  constructor(budgetMs: number, logger: Logger) {
    this.#deadline = Date.now() + budgetMs;
    this.#logger = logger;
  }

  remainingMs(): number {
    return Math.max(0, this.#deadline - Date.now());
  }

  /** The steps the deadline cut short, in the order they ran. */
  get unfinished(): readonly string[] {
    return this.#unfinished;
  }

  /**
   * Runs `step` until it ends or the budget does. A step that fails is logged and counts as
   * ended (the next step runs); once the budget is spent, later steps are started but not waited for.
   */
  async run(name: string, step: () => unknown): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const ended = Promise.resolve()
      .then(step)
      .catch((err: unknown) => this.#logger.error({ err, step: name }, "shutdown step failed"))
      .then(() => "ended" as const);
    const outOfTime = new Promise<"out of time">((resolve) => {
      timer = setTimeout(resolve, this.remainingMs(), "out of time");
    });
    const outcome = await Promise.race([ended, outOfTime]);
    clearTimeout(timer);
    if (outcome === "out of time") this.#unfinished.push(name);
  }
}
