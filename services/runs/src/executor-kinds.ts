import { Code, ConnectError } from "@connectrpc/connect";
import {
  kindReportTtlMs,
  kindTestsName,
  type Logger,
  maxReportingExecutors,
  type TestKind,
  testKinds,
} from "@testrun/kit";
import type { Redis } from "ioredis";

/**
 * The executors' reports (RunsService.ReportExecutorKinds), one field per executor, shared by every
 * replica of the runs service (its Redis user alone holds it: executors never write to Redis).
 */
export const executorKindsKey = "testrun:executors";

/**
 * Keeps a report unless it would make the hash hold more than ARGV[3] executors: an executor
 * already there may always report again. One script, so reports at once cannot overshoot.
 */
const keepReportScript = `
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 or redis.call('hlen', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('hset', KEYS[1], ARGV[1], ARGV[2])
  return 1
end
return 0`;

/** One kind in an executor's report. */
export interface KindReport {
  configured: boolean;
  available: boolean;
  /** Configured, not available: why (kindCause). */
  cause?: string;
}

/** An executor's report as kept: when it was made (ms since the epoch) and its kinds. */
interface StoredReport {
  at: number;
  kinds: Partial<Record<TestKind, KindReport>>;
}

/** What the reports still counting say of a kind. */
interface KindWord {
  /** Some executor takes it. */
  available: boolean;
  /** Why one configured for it cannot run it (the first reported). */
  cause?: string;
  /** Executors report, none of them configured for it. */
  unconfigured: boolean;
}

/**
 * Why no executor here can run a kind of test (docs/runs.md, "Kinds no executor can run"), from
 * what the executors report: kept by `report`, read again at each reconciler pass (`refresh`), and
 * used by the reconciler to say why it skips a test past the dispatch deadline, and by the reads to
 * say what a QUEUED test waits for (TestResult.waiting_for). Nothing is known while no executor
 * reports (none runs, or only older ones): the reasons are then the general ones.
 */
export class ExecutorKinds {
  #words: Partial<Record<TestKind, KindWord>> = {};
  #failing = false;

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
    /** How many executors' reports are kept at once (every replica together). */
    private readonly maxExecutors = maxReportingExecutors,
  ) {}

  /**
   * Keeps an executor's report, replacing its previous one; none (no kinds) forgets it. A new
   * executor past `maxExecutors` live reports is refused (RESOURCE_EXHAUSTED), once the reports of
   * executors gone (older than `kindReportTtlMs`) are forgotten: an executor token cannot fill
   * Redis with made-up executor names.
   */
  async report(executor: string, kinds: Partial<Record<TestKind, KindReport>>): Promise<void> {
    if (Object.keys(kinds).length === 0) {
      await this.redis.hdel(executorKindsKey, executor);
      return;
    }
    const stored = JSON.stringify({ at: Date.now(), kinds } satisfies StoredReport);
    const keep = async () =>
      (await this.redis.eval(keepReportScript, 1, executorKindsKey, executor, stored, this.maxExecutors)) ===
      1;
    if (await keep()) return;
    await this.#forgetStale();
    if (await keep()) return;
    throw new ConnectError(
      `the runs service already keeps the reports of ${this.maxExecutors} executors, the most it keeps (maxReportingExecutors): this executor's report is refused until others stop or their reports expire (${kindReportTtlMs / 1000} s after their last)`,
      Code.ResourceExhausted,
    );
  }

  /** Forgets the reports older than `kindReportTtlMs` (executors gone); answers the others. */
  async #forgetStale(): Promise<StoredReport[]> {
    const reports = await this.redis.hgetall(executorKindsKey);
    const now = Date.now();
    const current: StoredReport[] = [];
    const stale: string[] = [];
    for (const [executor, text] of Object.entries(reports)) {
      const report = parseReport(text);
      if (report && now - report.at <= kindReportTtlMs) current.push(report);
      else stale.push(executor);
    }
    if (stale.length > 0) await this.redis.hdel(executorKindsKey, ...stale);
    return current;
  }

  /**
   * Reads the reports still counting (one round trip) and forgets those older than
   * `kindReportTtlMs` (executors gone). A failure keeps what was known, and is logged once.
   */
  async refresh(): Promise<void> {
    try {
      this.#words = wordsOf(await this.#forgetStale());
      this.#failing = false;
    } catch (err) {
      if (!this.#failing)
        this.logger.warn({ err }, "could not read the executors' reports of the kinds they take");
      this.#failing = true;
    }
  }

  /**
   * Why no executor here can run tests of `kind`: the cause one reported, or that none is configured
   * for them; undefined when one takes them, or nothing is known.
   */
  blocker(kind: TestKind): string | undefined {
    const word = this.#words[kind];
    if (!word || word.available) return undefined;
    if (word.cause) return word.cause;
    return word.unconfigured ? "no executor is configured for them" : undefined;
  }

  /** The summary of a test of `kind` skipped at the dispatch deadline, when the blocker is known. */
  skipSummary(kind: TestKind): string | undefined {
    const blocker = this.blocker(kind);
    return blocker && `no executor here can run ${kindTestsName[kind]}: ${blocker}`;
  }

  /** What a QUEUED test of `kind` waits for, when something is known to be in its way (TestResult.waiting_for). */
  waitingFor(kind: TestKind): string | undefined {
    const blocker = this.blocker(kind);
    return blocker && `an executor that can run ${kindTestsName[kind]}: ${blocker}`;
  }
}

function parseReport(text: string): StoredReport | undefined {
  try {
    const value = JSON.parse(text) as StoredReport;
    return typeof value?.at === "number" && typeof value.kinds === "object" && value.kinds !== null
      ? value
      : undefined;
  } catch {
    return undefined;
  }
}

/** What the reports say of each kind, together. */
function wordsOf(reports: readonly StoredReport[]): Partial<Record<TestKind, KindWord>> {
  const words: Partial<Record<TestKind, KindWord>> = {};
  if (reports.length === 0) return words;
  for (const kind of testKinds) {
    const of = reports.map((report) => report.kinds[kind]).filter((entry) => entry !== undefined);
    const configured = of.filter((entry) => entry.configured);
    words[kind] = {
      available: configured.some((entry) => entry.available),
      cause: configured.find((entry) => !entry.available && entry.cause)?.cause,
      unconfigured: configured.length === 0,
    };
  }
  return words;
}
