import type { DatabaseSpec } from "@testrun/kit";
import { entities } from "./entities.js";
import { migrations } from "./migrations/index.js";

/** The runs service's data: schema `runs`. */
export const database: DatabaseSpec = { schema: "runs", entities, migrations };
