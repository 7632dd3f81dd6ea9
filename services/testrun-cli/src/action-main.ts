// The GitHub Action's process (action.yml runs its bundle, action/index.mjs).
import { runAction } from "./action.js";
import { processIo } from "./process-io.js";

process.exit(await runAction(processIo()));
