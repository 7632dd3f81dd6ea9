/**
 * The part of `make bench` running now, so that an error nobody caught (a rejection of a call the
 * bench made, a stray promise) is reported with the table and step it broke, not as a bare stack
 * after the last figure printed.
 */
export const benchPart = { current: "start-up" };

/** Marks the part of the bench about to run. */
export function enterBenchPart(name: string): void {
  benchPart.current = name;
}

/**
 * Names the part that was running when an error reached the top (an uncaught exception or an
 * unhandled rejection, top-level await's included); Node then prints the error and exits 1 as it
 * would anyway.
 */
export function reportFailedBenchPart(): void {
  process.on("uncaughtExceptionMonitor", (error, origin) => {
    const what = origin === "unhandledRejection" ? "an unhandled rejection" : "an uncaught exception";
    console.error(`\nmake bench failed in ${benchPart.current}: ${what}: ${String(error)}\n`);
  });
}
