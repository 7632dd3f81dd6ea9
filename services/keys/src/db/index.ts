import type { DatabaseSpec } from "@testrun/kit";
import { entities } from "./entities.js";
import { migrations } from "./migrations/index.js";

/** The keys service's data: schema `keys`. */
export const database: DatabaseSpec = { schema: "keys", entities, migrations };
