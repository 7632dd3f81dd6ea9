import type { Logger } from "./logger.js";

export interface BackgroundLoopOptions {
  /** Names the loop in the line logged when a pass fails. */
  name: string;
  /** The wait between the end of one pass and the start of the next. */
  intervalMs: number;
  /**
   * One pass. A positive count or `true` says it found work, and the next pass starts at once
   * (a backlog drains without waiting an interval per batch); anything else waits an interval.
   */
  pass: () => Promise<unknown>;
  logger: Logger;
  /** The wait before the first pass (default 0: at once). */
  firstAfterMs?: number;
}

export interface BackgroundLoop {
  /** Runs the next pass now instead of at the end of the interval (no effect while one runs). */
  wake(): void;
  /** Ends the loop; resolves once the pass under way, if any, has ended. */
  stop(): Promise<void>;
}

/**
 * Runs `pass` in the background, one pass at a time, each `intervalMs` after the previous ended
 * (so a slow pass never overlaps the next). A pass that throws is logged and the loop goes on:
 * the database or a service it needs may be back by the next pass. The timers are unref'd, so a
 * loop alone never keeps a process alive; `stop` waits for the pass under way, so a service can
 * close its connections after it.
 */
export function startLoop(options: BackgroundLoopOptions): BackgroundLoop {
  const { name, intervalMs, pass, logger } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const schedule = (ms: number) => {
    timer = setTimeout(tick, ms);
    timer.unref();
  };
  const run = async () => {
    let busy = false;
    try {
      const found = await pass();
      busy = typeof found === "number" ? found > 0 : found === true;
    } catch (err) {
      logger.error({ err, loop: name }, "background pass failed; the next one retries");
    }
    running = undefined;
    if (!stopped) schedule(busy ? 0 : intervalMs);
  };
  function tick() {
    timer = undefined;
    running = run();
  }

  schedule(options.firstAfterMs ?? 0);
  return {
    wake() {
      if (timer && !stopped) {
        clearTimeout(timer);
        schedule(0);
      }
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
