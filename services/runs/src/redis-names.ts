// The Redis names the runs service uses beside the kit's test streams (the executors' kinds, the run
// changes channel), exported as `@testrun/runs/redis-names` for the test of the Redis users' rules
// (test/redis-users.test.ts), which tries each command on them as every component.
export { executorKindsKey } from "./executor-kinds.js";
export { runChangesChannel } from "./run-events.js";
