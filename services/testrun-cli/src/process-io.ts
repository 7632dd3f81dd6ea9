// This process's surroundings for main(): its environment, streams, and SIGINT/SIGTERM as an abort.
import type { Io } from "./cli.js";
import { signalExitCode } from "./outcome.js";

export function processIo(): Io {
  const stop = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      // A second signal while the run is being cancelled ends at once.
      if (stop.signal.aborted) process.exit(signalExitCode[signal]);
      stop.abort(signal);
    });
  }
  return {
    env: process.env,
    stdout: { write: (text) => process.stdout.write(text), isTTY: process.stdout.isTTY === true },
    stderr: { write: (text) => process.stderr.write(text) },
    stop: stop.signal,
  };
}
