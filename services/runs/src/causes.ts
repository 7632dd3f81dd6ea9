import { FailureCause } from "@testrun/gen/testrun/runs/v1/runs_pb";
import type { FailureCause as StoredCause } from "./db/entities.js";

/** The causes as stored, and as the API names them (FailureCause). */
export const failureCauses: Record<StoredCause, FailureCause> = {
  assertion: FailureCause.ASSERTION,
  locator: FailureCause.LOCATOR,
  timeout: FailureCause.TIMEOUT,
  network: FailureCause.NETWORK,
  egress_refused: FailureCause.EGRESS_REFUSED,
  environment_unreachable: FailureCause.ENVIRONMENT_UNREACHABLE,
  browser: FailureCause.BROWSER,
  executor_lost: FailureCause.EXECUTOR_LOST,
  no_executor: FailureCause.NO_EXECUTOR,
};
