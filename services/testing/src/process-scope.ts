// What a test process keeps for all of its suites (the shared whole system of test/pipeline.ts,
// say) and lets go of when it ends. Mocha runs the test files either in this one process or, in
// parallel, in worker processes that run many files each and are ended with process.exit: a root
// hook (test/global-setup.ts) stops these resources gracefully at the end of a serial run, and a
// worker's exit kills them, since nothing asynchronous runs once a process exits.

export interface ProcessScoped {
  /** Stops it gracefully. */
  stop(): Promise<unknown>;
  /** Ends it at once, synchronously (signals only): what can still be done while the process exits. */
  kill(): void;
}

// One list per process, even when this module is loaded twice (mocha's require and an import each
// make a copy of their own).
const registry = Symbol.for("testrun.testing.processScoped");
const scope = globalThis as typeof globalThis & { [registry]?: ProcessScoped[] };
scope[registry] ??= installExitHook([]);
const kept: ProcessScoped[] = scope[registry];

function installExitHook(list: ProcessScoped[]): ProcessScoped[] {
  process.on("exit", () => {
    for (const left of list.splice(0)) left.kill();
  });
  return list;
}

/** Keeps a resource until the test process ends. */
export function keepForTestProcess(resource: ProcessScoped): void {
  kept.push(resource);
}

/** Stops every resource kept so far, the last kept first. */
export async function stopTestProcessResources(): Promise<void> {
  for (const resource of kept.splice(0).reverse()) await resource.stop();
}
