import { randomBytes } from "node:crypto";
import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { connectRedis, loadConfig } from "@testrun/kit";
import { capturedLogger, type InProcessRunsStack } from "@testrun/testing";

/** An executor wired in the test's process, as main.ts wires it. */
export interface InProcessExecutor {
  /** Every line it logged so far. */
  lines(): string[];
  /** Resolves with the first line it logged, or logs later, that passes `test`. */
  logLine(test: (line: string) => boolean): Promise<string>;
  /** Resolves once it checked the kinds it is configured for (its browser launched, or not). */
  checked: Promise<void>;
  /** As main.ts's shutdown: no new tests, those in flight end, then the browser and Redis close. */
  stop(): Promise<void>;
}

/**
 * An executor in-process against `stack` (runs and catalog in-process too, called with the
 * executor token), reading the stack's test streams as its own Redis user; `env` on top (egress,
 * deadlines, concurrency). What crosses processes (a killed executor, SIGTERM, the streams read by
 * another process) is for executor processes (queue.test.ts, the whole-system tests).
 */
export async function startExecutor(
  stack: InProcessRunsStack,
  env: Record<string, string>,
): Promise<InProcessExecutor> {
  // By import(), as @testrun/testing loads the runs service: the kit's copies of its modules.
  const { configSchema, wireExecutor } = await import("../src/wiring.js");
  const token = String(stack.env.EXECUTOR_TOKEN);
  const config = loadConfig(configSchema, {
    EXECUTOR_TOKEN: token,
    REDIS_URL: stack.redisUrlOf("executor"),
    ...env,
  });
  const log = capturedLogger("executor", config.LOG_LEVEL);
  const redis = await connectRedis(config.REDIS_URL);
  const wiring = await wireExecutor({
    config,
    redis,
    logger: log.logger,
    runs: stack.rpc.client(RunsService, token),
    catalog: stack.rpc.client(CatalogService, token),
    name: `in-process-${randomBytes(3).toString("hex")}`,
  });
  return {
    lines: log.lines,
    logLine: log.line,
    checked: wiring.checked,
    async stop() {
      await wiring.stop();
      await redis.quit();
    },
  };
}
