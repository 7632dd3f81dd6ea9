import { RunsService } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { baseConfigSchema, bind, portVar, postgresUrl, runService } from "@testrun/kit";
import { database } from "./db/index.js";

await runService({
  name: "runs",
  config: baseConfigSchema.extend({ PORT: portVar(7104), DATABASE_URL: postgresUrl }),
  database,
  // Methods not implemented yet answer UNIMPLEMENTED.
  setup: () => [bind(RunsService, {})],
});
