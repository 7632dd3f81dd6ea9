import type { DatabaseSpec } from "@testrun/kit";
import { entities } from "./entities.js";
import { migrations } from "./migrations/index.js";

/** The automation service's data: schema `automation`. */
export const database: DatabaseSpec = { schema: "automation", entities, migrations };
