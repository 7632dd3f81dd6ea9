import { Writable } from "node:stream";
import { setImmediate as nextTurn } from "node:timers/promises";
import { startLoop } from "@testrun/kit";
import { expect } from "chai";
import { pino } from "pino";

/** A logger whose lines are kept, parsed, for the test to read. */
function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino(stream), lines };
}

/** A promise with its resolve at hand. */
function signal() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const hourMs = 3_600_000;

// The loop the reconciler, the artifact sweeper, the catalog's outbox, automation's workers and the
// console's session sweep run in (kit background-loop.ts).
describe("a background loop (kit startLoop)", () => {
  it("logs a pass that throws with the loop's name and goes on to the next pass", async () => {
    const { logger, lines } = capturedLogger();
    const third = signal();
    let passes = 0;
    const loop = startLoop({
      name: "reconciler",
      intervalMs: 1,
      logger,
      pass: async () => {
        passes += 1;
        if (passes === 1) throw new Error("database unreachable");
        if (passes === 3) third.resolve();
      },
    });
    await third.promise;
    await loop.stop();
    const failed = lines.filter((line) => line.msg === "background pass failed; the next one retries");
    expect(failed).to.have.length(1);
    expect(failed[0]).to.deep.include({ loop: "reconciler", level: 50 });
    expect(failed[0]).to.have.nested.property("err.message", "database unreachable");
  });

  it("runs the next pass at once while a pass finds work, and an interval later once none is left", async () => {
    const { logger } = capturedLogger();
    const drained = signal();
    const found = [500, 500, 12, 0];
    let passes = 0;
    const loop = startLoop({
      name: "deliveries",
      intervalMs: hourMs,
      logger,
      pass: async () => {
        const count = found[passes] ?? 0;
        passes += 1;
        if (count === 0) drained.resolve();
        return count;
      },
    });
    // Four passes within an hour-long interval: the three that found work did not wait it.
    await drained.promise;
    await loop.stop();
    expect(passes).to.equal(4);
  });

  it("waits `firstAfterMs` before the first pass, and `wake` runs it now", async () => {
    const { logger } = capturedLogger();
    const ran = signal();
    let passes = 0;
    const loop = startLoop({
      name: "notification retry",
      intervalMs: hourMs,
      firstAfterMs: hourMs,
      logger,
      pass: async () => {
        passes += 1;
        ran.resolve();
      },
    });
    await nextTurn();
    expect(passes).to.equal(0);
    loop.wake();
    await ran.promise;
    await loop.stop();
    expect(passes).to.equal(1);
  });

  it("stops only once the pass under way has ended, and starts none after", async () => {
    const { logger } = capturedLogger();
    const started = signal();
    const release = signal();
    let passes = 0;
    const loop = startLoop({
      name: "artifact sweeper",
      intervalMs: 0,
      logger,
      pass: async () => {
        passes += 1;
        started.resolve();
        await release.promise;
        return 1; // found work: without the stop, the next pass would start at once
      },
    });
    await started.promise;
    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    await nextTurn();
    expect(stopped, "stop resolved while its pass still ran").to.equal(false);
    release.resolve();
    await stopping;
    expect(stopped).to.equal(true);
    loop.wake();
    await nextTurn();
    expect(passes).to.equal(1);
  });
});
