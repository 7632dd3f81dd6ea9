import { toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type Run, RunSchema } from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { Logger } from "pino";
import type { RunEvents } from "./run-events.js";

export interface WatchOptions {
  /** How often a watched run is read again when no notice came. */
  refreshMs: number;
  /** Streams this replica serves at once. */
  maxStreams: number;
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(b);

/**
 * The WatchRun streams of this replica. Each reads its run at once, then again whenever a change
 * notice names it or `refreshMs` passed without one, and sends what it read only when it differs
 * from what it sent last (compared as serialized bytes). Notices arriving while a read is in flight
 * cause one more read after it, not one each. A stream ends after sending the finished run, when its
 * caller goes away, or at shutdown (`close`), so that a rollout does not wait on open streams.
 */
export class RunWatches {
  /** What interrupts each open stream's wait: its caller left, or the replica shuts down. */
  private readonly streams = new Set<() => void>();
  private closed = false;

  constructor(
    private readonly events: RunEvents,
    private readonly options: WatchOptions,
    private readonly logger: Logger,
  ) {}

  /**
   * Yields `read()`'s run at once and after each change, until it is finished or `signal` aborts.
   * An error of the first read (NOT_FOUND, say) ends the stream before any message; a later one
   * is logged and the read tried again at the next refresh: the run existed, and still does.
   */
  async *watch(runId: string, read: () => Promise<Run>, signal: AbortSignal): AsyncGenerator<Run> {
    if (this.closed) throw new ConnectError("the service is shutting down", Code.Unavailable);
    if (this.streams.size >= this.options.maxStreams)
      throw new ConnectError(
        "this replica watches as many runs as it may; call again later",
        Code.ResourceExhausted,
      );

    let due = true;
    let wake: (() => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    const interrupt = () => wake?.();
    const stopListening = this.events.listen(runId, () => {
      due = true;
      wake?.();
    });
    signal.addEventListener("abort", interrupt);
    this.streams.add(interrupt);
    try {
      let sent: Uint8Array | undefined;
      for (;;) {
        if (!due && !signal.aborted && !this.closed) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            timer = setTimeout(resolve, this.options.refreshMs);
          });
          clearTimeout(timer);
          wake = undefined;
        }
        if (signal.aborted || this.closed) return;
        due = false;
        let run: Run;
        try {
          run = await read();
        } catch (err) {
          if (!sent) throw err;
          this.logger.warn({ err, runId }, "could not read a watched run; trying again at the next refresh");
          continue;
        }
        const bytes = toBinary(RunSchema, run);
        if (!sent || !sameBytes(bytes, sent)) {
          sent = bytes;
          yield run;
        }
        if (run.finished) return;
      }
    } finally {
      clearTimeout(timer);
      stopListening();
      signal.removeEventListener("abort", interrupt);
      this.streams.delete(interrupt);
    }
  }

  /** Ends every open stream cleanly and refuses new ones (shutdown). */
  close(): void {
    this.closed = true;
    for (const interrupt of this.streams) interrupt();
  }
}
