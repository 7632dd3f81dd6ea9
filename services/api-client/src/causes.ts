/** Why an attempt FAILED; the last three are the system's own, not the test's. */
export type FailureCause =
  | "assertion"
  | "locator"
  | "timeout"
  | "network"
  | "egress_refused"
  | "environment_unreachable"
  | "browser"
  | "executor_lost"
  | "no_executor";
