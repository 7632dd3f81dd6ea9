import type { Logger } from "@testrun/kit";

/**
 * The audit record of executors' reads of variable values (docs/security.md, "Variables"), kept at
 * info without a line per test: each GetVariableValuesBatch call is logged at debug with its tests,
 * and every `intervalMs` (and when the service stops) one info line sums the reads since the last,
 * per project: calls, tests and values. A deployment that must keep every test's read logs at debug.
 */
export class VariableReadsAudit {
  private readonly sums = new Map<string, { calls: number; tests: number; values: number }>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly logger: Logger,
    intervalMs = 60_000,
  ) {
    this.timer = setInterval(() => this.flush(), intervalMs);
    this.timer.unref();
  }

  /** One call's read of a project's values for `tests` tests. */
  add(projectId: string, tests: number, values: number): void {
    const sum = this.sums.get(projectId) ?? { calls: 0, tests: 0, values: 0 };
    sum.calls += 1;
    sum.tests += tests;
    sum.values = Math.max(sum.values, values);
    this.sums.set(projectId, sum);
  }

  /** Logs the sums since the last line, if any, and starts again. */
  flush(): void {
    if (this.sums.size === 0) return;
    const projects = [...this.sums].map(([projectId, sum]) => ({ project_id: projectId, ...sum }));
    this.sums.clear();
    this.logger.info({ projects }, "executors read variable values");
  }

  stop(): void {
    clearInterval(this.timer);
    this.flush();
  }
}
