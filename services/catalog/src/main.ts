import { CatalogService } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { baseConfigSchema, bind, portVar, postgresUrl, runService } from "@testrun/kit";
import { database } from "./db/index.js";

await runService({
  name: "catalog",
  config: baseConfigSchema.extend({ PORT: portVar(7102), DATABASE_URL: postgresUrl }),
  database,
  // Methods not implemented yet answer UNIMPLEMENTED.
  setup: () => [bind(CatalogService, {})],
});
