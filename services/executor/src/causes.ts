import { FailureCause } from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { TestFailureCause } from "./steps/runner.js";

/** The causes the executor reports, as CompleteTestRequest.cause names them. */
export const failureCauses: Record<TestFailureCause, FailureCause> = {
  assertion: FailureCause.ASSERTION,
  locator: FailureCause.LOCATOR,
  timeout: FailureCause.TIMEOUT,
  network: FailureCause.NETWORK,
  egress_refused: FailureCause.EGRESS_REFUSED,
  environment_unreachable: FailureCause.ENVIRONMENT_UNREACHABLE,
  browser: FailureCause.BROWSER,
};
