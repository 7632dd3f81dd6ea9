import type { EntityManager } from "@mikro-orm/postgresql";
import { type Run, RunStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { newId } from "@testrun/kit";
import type { EventData } from "./payload.js";

// Which webhooks hear of what (docs/automation.md, "Events"), written as deliveries (the outbox)
// in the caller's transaction.

interface Subscriber {
  id: string;
  kind: "standard" | "slack";
  events: string[];
  notify_mode: "failures_and_recoveries" | "every_run";
}

/** Renders one event for one webhook: the body sent on every attempt. */
export type Render = (event: EventData, kind: "standard" | "slack") => Promise<string>;

export async function enqueue(
  em: EntityManager,
  projectId: string,
  events: readonly (EventData & { quiet?: boolean })[],
  render: Render,
): Promise<number> {
  if (events.length === 0) return 0;
  const hooks = await em.execute<Subscriber[]>(
    "select id, kind, events, notify_mode from automation.webhooks where project_id = ? and not paused",
    [projectId],
  );
  let written = 0;
  for (const hook of hooks)
    for (const event of events) {
      if (!hook.events.includes(event.type)) continue;
      // Quiet mode: a run.finished of a pass that recovers nothing is not told.
      if (event.quiet && hook.notify_mode === "failures_and_recoveries") continue;
      await em.execute(
        `insert into automation.deliveries (id, webhook_id, project_id, event_type, run_id, body, state, next_attempt_at, created_at)
         values (?, ?, ?, ?, ?, ?, 'pending', now(), now())`,
        [newId("dlv"), hook.id, projectId, event.type, event.run?.id ?? null, await render(event, hook.kind)],
      );
      written++;
    }
  return written;
}

/** What a plan (or, for runs of no plan, a run name) is keyed by in plan_states. */
export const selectionKey = (run: Run) => run.testPlanId ?? `name:${run.name}`;

/**
 * The events of a finished run, and its plan's new state recorded (passing or failing; a skipped
 * run changes nothing). Quiet mode hears failures and the first pass after a failure.
 */
export async function runEvents(em: EntityManager, run: Run): Promise<(EventData & { quiet?: boolean })[]> {
  const finishedAt = run.finishedAt
    ? new Date(Number(run.finishedAt.seconds) * 1000 + run.finishedAt.nanos / 1e6)
    : new Date();
  const key = selectionKey(run);
  const rows = await em.execute<{ state: "passing" | "failing" }[]>(
    "select state from automation.plan_states where project_id = ? and selection_key = ? and environment_id = ? for update",
    [run.projectId, key, run.environmentId],
  );
  const before = rows[0]?.state;
  const now =
    run.status === RunStatus.PASSED ? "passing" : run.status === RunStatus.FAILED ? "failing" : undefined;
  if (now)
    await em.execute(
      `insert into automation.plan_states (project_id, selection_key, environment_id, state, run_id, updated_at)
       values (?, ?, ?, ?, ?, now())
       on conflict (project_id, selection_key, environment_id) do update set state = excluded.state, run_id = excluded.run_id, updated_at = now()`,
      [run.projectId, key, run.environmentId, now, run.id],
    );
  const events: (EventData & { quiet?: boolean })[] = [
    {
      type: "run.finished",
      timestamp: finishedAt,
      run,
      quiet: !(now === "failing" || (now === "passing" && before === "failing")),
    },
  ];
  if (run.status === RunStatus.FAILED) events.push({ type: "run.failed", timestamp: finishedAt, run });
  if (before && now && before !== now)
    events.push({ type: "plan.state_changed", timestamp: finishedAt, run, state: { from: before, to: now } });
  if ((run.newFailures ?? 0) > 0) events.push({ type: "run.new_failures", timestamp: finishedAt, run });
  // A group first seen in this run opened with it: once per group, however many tests are in it.
  const opened = new Map(
    run.tests
      .filter((test) => test.failureGroup && test.failureGroup.firstSeenRunId === run.id)
      .map((test) => [test.failureGroup?.id, test]),
  );
  for (const test of opened.values())
    events.push({ type: "failure_group.opened", timestamp: finishedAt, run, failureGroup: test });
  return events;
}
