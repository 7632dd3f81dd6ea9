import type { DatabaseSpec } from "@testrun/kit";
import { entities } from "./entities.js";
import { migrations } from "./migrations/index.js";

/** The console's data: schema `console` (sessions, sign-in links, OIDC sign-ins under way). */
export const database: DatabaseSpec = { schema: "console", entities, migrations };
