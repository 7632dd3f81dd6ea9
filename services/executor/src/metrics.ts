import type { TestAssignment } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { counter, gauge } from "@testrun/kit";

// The executor's domain metrics (docs/operations.md, "Metrics"); labels bounded: statuses and kinds.

export const testsExecuted = counter<"status" | "step_kind">(
  "testrun_tests_executed_total",
  "Tests executed to a result, by status (passed, failed, skipped) and step kind (http, browser, mixed)",
  ["status", "step_kind"],
);

/** `http` or `browser` when every step is of that kind, else `mixed`. */
export function stepKindOf(assignment: TestAssignment): "http" | "browser" | "mixed" | "spec" {
  if (assignment.playwright) return "spec";
  const kinds = new Set(assignment.steps.map((step) => (step.kind.case === "browser" ? "browser" : "http")));
  return kinds.size === 1 && kinds.has("browser") ? "browser" : kinds.has("browser") ? "mixed" : "http";
}

/** The gauges read from the executor and its browser pool at scrape time. */
export function registerExecutorGauges(read: {
  slots: () => { busy: number; free: number };
  contexts: () => number;
  /** The kinds of test it is configured for, and whether it takes each now. */
  kinds: () => { kind: string; taken: boolean }[];
}) {
  gauge<"pool">(
    "testrun_executor_kind_available",
    "1 while this executor takes the tests of a pool (kind: http, browser) it is configured for, 0 while it cannot run them (its browser does not start)",
    ["pool"],
    function () {
      for (const { kind, taken } of read.kinds()) this.set({ pool: kind }, taken ? 1 : 0);
    },
  );
  gauge<"state">(
    "testrun_executor_slots",
    "Test slots of this executor, busy or free",
    ["state"],
    function () {
      const { busy, free } = read.slots();
      this.set({ state: "busy" }, busy);
      this.set({ state: "free" }, free);
    },
  );
  gauge("testrun_browser_contexts_open", "Browser contexts open", [], function () {
    this.set(read.contexts());
  });
}
