import { type Run, RunStatus, type TestResult, TestStatus } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { runJson } from "@testrun/kit/run-json";

// What a delivery sends (docs/automation.md, "Payload"): Standard Webhooks JSON, or a Slack message.

export interface EventData {
  type: string;
  /** When the event happened (the run's finish, the tick's due time). */
  timestamp: Date;
  run?: Run;
  /** plan.state_changed: from and to. */
  state?: { from: "passing" | "failing"; to: "passing" | "failing" };
  /** schedule.tick_failed. */
  tick?: { scheduleId: string; scheduleName: string; dueAt: Date; failure: string };
  /** test_case.quarantined, .quarantine_lifted, .quarantine_expired. */
  quarantine?: QuarantineData;
  /** failure_group.opened: the first test of the run in the group that opened. */
  failureGroup?: TestResult;
}

/** A quarantine as a webhook tells it (docs/automation.md, "Events"). */
export interface QuarantineData {
  testCase: { id: string; name: string; url: string };
  reason: string;
  startedAt: string;
  expiresAt: string;
  startedByMemberId: string | null;
  endedAt: string | null;
  liftedByMemberId: string | null;
}

/** `{"type","timestamp","data":{"event",…,"run"}}`, the run as GET /v1/runs/:id shows it. */
export function standardBody(event: EventData, apiUrl: string): string {
  return JSON.stringify({
    type: event.type,
    timestamp: event.timestamp.toISOString(),
    data: {
      event: event.type,
      ...(event.state && { state: event.state }),
      ...(event.tick && {
        schedule: { id: event.tick.scheduleId, name: event.tick.scheduleName },
        dueAt: event.tick.dueAt.toISOString(),
        failure: event.tick.failure,
      }),
      ...(event.quarantine && { quarantine: event.quarantine }),
      ...(event.failureGroup?.failureGroup && {
        failureGroup: {
          id: event.failureGroup.failureGroup.id,
          occurrences: event.failureGroup.failureGroup.occurrences,
          casesAffected: event.failureGroup.failureGroup.casesAffected,
          firstTest: {
            id: event.failureGroup.id,
            name: event.failureGroup.name,
            summary: event.failureGroup.summary,
          },
        },
      }),
      ...(event.run && { run: runJson(event.run, apiUrl) }),
    },
  });
}

/** The most failed tests a Slack message lists; the rest are counted. */
export const slackMaxFailedTests = 10;
/** Slack's bound on a section block's text (api.slack.com, "Section block"). */
export const slackSectionTextLimit = 3000;
/** Room kept for the "and N more" line. */
const moreLineRoom = 40;

const slackEscape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * Slack's incoming-webhook message: `text` (the notification's fallback) and section blocks in
 * mrkdwn: status, plan and environment, failed tests with their summaries, the run's url.
 */
export function slackBody(event: EventData, names: { plan?: string; environment: string }): string {
  const run = event.run;
  if (!run && event.quarantine) {
    const q = event.quarantine;
    const what =
      event.type === "test_case.quarantined"
        ? `quarantined until ${q.expiresAt.slice(0, 10)}: ${q.reason}`
        : event.type === "test_case.quarantine_lifted"
          ? "is no longer quarantined (lifted)"
          : "is no longer quarantined (expired)";
    const text = `Test case "${q.testCase.name || q.testCase.id}" ${what}`;
    return JSON.stringify({
      text: `${text} ${q.testCase.url}`,
      blocks: [
        {
          type: "section",
          text: {
            type: "mrkdwn",
            text: `:construction: *<${q.testCase.url}|${slackEscape(q.testCase.name || q.testCase.id)}>* ${slackEscape(what)}`,
          },
        },
      ],
    });
  }
  if (!run) {
    const tick = event.tick;
    const text = `Schedule "${tick?.scheduleName}" could not start a run: ${tick?.failure}`;
    return JSON.stringify({
      text,
      blocks: [{ type: "section", text: { type: "mrkdwn", text: `:warning: ${slackEscape(text)}` } }],
    });
  }
  const status =
    run.status === RunStatus.PASSED ? "passed" : run.status === RunStatus.FAILED ? "failed" : "was skipped";
  const icon =
    run.status === RunStatus.PASSED
      ? ":white_check_mark:"
      : run.status === RunStatus.FAILED
        ? ":x:"
        : ":grey_question:";
  const newOnes = run.newFailures ? ` (${run.newFailures} new)` : "";
  // Passes on retry are counted in passed: named beside them, as the REST run's flakyTests.
  const passed = run.flakyTests
    ? `${run.passedTests} passed (${run.flakyTests} flaky)`
    : `${run.passedTests} passed`;
  const headline = `Run "${run.name}" ${status}: ${passed}, ${run.failedTests} failed${newOnes} of ${run.totalTests}`;
  // New failures (against the run's base) lead: they are what someone has to look at first.
  const failed = run.tests
    .filter((t) => t.status === TestStatus.FAILED)
    .sort((a, b) => Number(b.newFailure) - Number(a.newFailure));
  // As many failed tests as fit in one section (Slack refuses a section's text over 3000
  // characters), at most slackMaxFailedTests; the rest counted, never cut mid-line.
  let failedText = "*Failed tests*";
  let listed = 0;
  for (const test of failed.slice(0, slackMaxFailedTests)) {
    const line = `• ${test.newFailure ? "*new* " : ""}*${slackEscape(test.name)}*: ${slackEscape(test.summary)}`;
    if (failedText.length + 1 + line.length > slackSectionTextLimit - moreLineRoom) break;
    failedText += `\n${line}`;
    listed++;
  }
  if (failed.length > listed) failedText += `\nand ${failed.length - listed} more`;
  const blocks: unknown[] = [
    {
      type: "section",
      text: { type: "mrkdwn", text: `${icon} *<${run.url}|${slackEscape(run.name)}>* ${status}` },
    },
    {
      type: "section",
      fields: [
        { type: "mrkdwn", text: `*Plan*\n${slackEscape(names.plan ?? "(no plan)")}` },
        { type: "mrkdwn", text: `*Environment*\n${slackEscape(names.environment)}` },
        {
          type: "mrkdwn",
          text: `*Tests*\n${passed}, ${run.failedTests} failed, ${run.skippedTests} skipped`,
        },
      ],
    },
  ];
  if (failed.length > 0) blocks.push({ type: "section", text: { type: "mrkdwn", text: failedText } });
  blocks.push({ type: "section", text: { type: "mrkdwn", text: `<${run.url}|Open the run>` } });
  return JSON.stringify({ text: `${headline} ${run.url}`, blocks });
}
