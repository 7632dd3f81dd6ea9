import { Cron } from "croner";

// Schedules' times (docs/automation.md, "Schedules"): croner reads the expression in the
// schedule's IANA time zone (daylight-saving changes included).

/** Why a cron expression or time zone is refused; undefined when both are fine. */
export function cronProblems(
  cron: string,
  timeZone: string,
  allowSeconds: boolean,
): { field: "cron" | "time_zone"; description: string }[] {
  const problems: { field: "cron" | "time_zone"; description: string }[] = [];
  try {
    new Intl.DateTimeFormat("en", { timeZone });
  } catch {
    problems.push({
      field: "time_zone",
      description: `unknown time zone "${timeZone.slice(0, 60)}" (an IANA name like Europe/Berlin)`,
    });
  }
  if (cron.length === 0 || cron.length > 200)
    problems.push({ field: "cron", description: "must be 1 to 200 characters" });
  else
    try {
      const job = new Cron(cron, { paused: true, mode: allowSeconds ? "5-or-6-parts" : "5-part" });
      // "0 0 31 2 *" parses, but no day matches it: an active schedule that would never run.
      if (job.nextRun() === null)
        problems.push({ field: "cron", description: "no date matches it: it would never run" });
    } catch (error) {
      problems.push({ field: "cron", description: (error as Error).message.replace(/^CronPattern: /, "") });
    }
  return problems;
}

/** The next `count` times after `after` (a validated expression). */
export function nextTicks(cron: string, timeZone: string, after: Date, count: number): Date[] {
  return new Cron(cron, { paused: true, timezone: timeZone, mode: "5-or-6-parts" }).nextRuns(count, after);
}

/**
 * The tick to run when a schedule's `nextDue` has come at `now`: the latest one at or before now
 * (ticks missed while no replica ran are not all replayed: at most the last), and the one after it.
 */
export function dueTick(
  cron: string,
  timeZone: string,
  nextDue: Date,
  now: Date,
): { due: Date; next: Date | null } {
  const job = new Cron(cron, { paused: true, timezone: timeZone, mode: "5-or-6-parts" });
  let due = nextDue;
  // Bounded walk: past 1,000 missed ticks, croner's previous run finds the latest directly.
  for (let step = 0; step < 1000; step++) {
    const following = job.nextRun(due);
    if (!following || following > now) return { due, next: following };
    due = following;
  }
  const latest = job.previousRuns(1, new Date(now.getTime() + 1))[0] ?? due;
  return { due: latest, next: job.nextRun(latest) };
}
