import type { DatabaseSpec } from "@testrun/kit";
import { entities } from "./entities.js";
import { migrations } from "./migrations/index.js";

/** The billing service's data: schema `billing`. */
export const database: DatabaseSpec = { schema: "billing", entities, migrations };
