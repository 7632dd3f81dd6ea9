import type { DatabaseSpec } from "@testrun/kit";
import { entities } from "./entities.js";
import { migrations } from "./migrations/index.js";

/** The catalog service's data: schema `catalog`. */
export const database: DatabaseSpec = { schema: "catalog", entities, migrations };
