// The executor pods' process. Until test execution lands it serves health and reflection only,
// so probes and the chart treat it like every other service.
import { baseConfigSchema, portVar, runService } from "@testrun/kit";

await runService({
  name: "executor",
  config: baseConfigSchema.extend({ PORT: portVar(7105) }),
  setup: () => [],
});
