// The `testrun` process.
import { main } from "./cli.js";
import { serveMcpOverStdio } from "./mcp/stdio.js";
import { processIo } from "./process-io.js";

const { code } = await main(process.argv.slice(2), { ...processIo(), serveMcp: serveMcpOverStdio });
// Nothing is left to do: a pending long-poll or timer must not hold the exit.
process.exit(code);
