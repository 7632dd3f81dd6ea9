// How the run page applies ConsoleService.WatchRun's messages (asked with `changes`): the first
// brings the whole run, each later one only what changed (the run's own fields and the tests that
// changed), naming the version it applies to. A page whose copy has another version missed a
// change: it reads the whole run again (a new call, whose first message is the whole run), as it does
// once the run finishes with a base, for its tests marked as new failures.
import type { RunDetails, WatchRunResponse } from "@testrun/gen/testrun/console/v1/console_pb";

/** The run as the page shows it after `message`, or "resync" when the page's copy is not the one it applies to. */
export function applyWatchMessage(
  current: RunDetails | undefined,
  message: WatchRunResponse,
): RunDetails | "resync" | undefined {
  if (message.run) return message.run;
  const change = message.change;
  if (!change) return current;
  const run = current?.run;
  if (!current || !run || run.version !== message.sinceVersion) return "resync";
  // The change that finishes a run with a base: the statement that finished it also marked its new
  // failures (TestResult.new_failure), which are not changes of those tests. Read the whole run.
  if (change.finished && !run.finished && change.baseRunId) return "resync";
  const changed = new Map(change.tests.map((test) => [test.id, test]));
  const tests = run.tests.map((test) => changed.get(test.id) ?? test);
  const known = new Set(run.tests.map((test) => test.id));
  for (const test of change.tests) if (!known.has(test.id)) tests.push(test);
  return { ...current, run: { ...change, tests } };
}
