// Attempts (issue 39; docs/rest-api.md, "Attempts, retries and causes"). A test's current or last
// attempt lives in the test's own columns; an attempt that ends without ending the test (retried,
// its executor lost, handed back) is appended to `earlier_attempts` by the statement that ends it,
// so a test of one attempt costs no write more than before attempts were kept.
/** SQL values (expressions or `?` placeholders) of how the current attempt of test `t` ended. */
interface EndedAttempt {
  status: string;
  durationMs: string;
  summary: string;
  failedStep: string;
  stepResults: string;
  cause: string;
}

/**
 * SQL: test `t`'s `earlier_attempts` with its current attempt appended, ended as `ended` says; for
 * the SET clause of the update that ends it (so `t`'s columns are still the attempt's own).
 */
export const withEndedAttempt = (ended: EndedAttempt) =>
  `t.earlier_attempts || jsonb_build_array(jsonb_build_object(
     'number', t.attempt, 'status', ${ended.status}, 'started_at', t.started_at, 'finished_at', now(),
     'duration_ms', ${ended.durationMs}, 'summary', ${ended.summary}, 'failed_step', ${ended.failedStep},
     'step_results', ${ended.stepResults}, 'cause', ${ended.cause}, 'executor_id', t.lease_owner,
     'lease_token', t.lease_token))`;

/** What a lapsed lease's attempt says: its executor stopped renewing it. */
export const lostAttemptSummary = "the executor stopped responding (lease lapsed)";

/** SQL: `earlier_attempts` with the current attempt ended by its lapsed lease (EXECUTOR_LOST). */
export const withLostAttempt = withEndedAttempt({
  status: "'failed'",
  durationMs: "greatest(0, (extract(epoch from (t.lease_expires_at - t.started_at)) * 1000)::bigint)",
  summary: `'${lostAttemptSummary}'`,
  failedStep: "null",
  stepResults: "'[]'::jsonb",
  cause: "'executor_lost'",
});

/** What a handed-back attempt says (ReleaseTest: its executor was shutting down, say). */
export const releasedAttemptSummary = "handed back by its executor before it ended";

/** SQL: `earlier_attempts` with the current attempt ended by a hand-back (SKIPPED, no cause). */
export const withReleasedAttempt = withEndedAttempt({
  status: "'skipped'",
  durationMs: "greatest(0, (extract(epoch from (now() - t.started_at)) * 1000)::bigint)",
  summary: `'${releasedAttemptSummary}'`,
  failedStep: "null",
  stepResults: "'[]'::jsonb",
  cause: "null",
});

/** The summary of a retry that no executor took before the dispatch deadline (NO_EXECUTOR). */
export const untakenRetrySummary = "no executor took the test's next attempt before the dispatch deadline";
