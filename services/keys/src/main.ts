import { KeysService } from "@testrun/gen/testrun/keys/v1/keys_pb";
import { baseConfigSchema, bind, portVar, postgresUrl, runService } from "@testrun/kit";
import { database } from "./db/index.js";

await runService({
  name: "keys",
  config: baseConfigSchema.extend({ PORT: portVar(7101), DATABASE_URL: postgresUrl }),
  database,
  // Methods not implemented yet answer UNIMPLEMENTED.
  setup: () => [bind(KeysService, {})],
});
