// A Playwright spec test's steps as it ran: one per `test()`, named by its title, each saying whether
// it passed, failed (with its error under it, redacted by the executor) or was skipped, and how long
// it took. A spec's `test()`s are known only from its results: there is no step list to show first.
import {
  type Artifact,
  ArtifactKind,
  type StepResult,
  TestStatus,
} from "@testrun/gen/testrun/runs/v1/runs_pb";
import { duration } from "../format";
import { Badge } from "./Status";

const states: Partial<Record<TestStatus, { tone: "good" | "bad" | "neutral"; label: string }>> = {
  [TestStatus.PASSED]: { tone: "good", label: "Passed" },
  [TestStatus.FAILED]: { tone: "bad", label: "Failed" },
  [TestStatus.SKIPPED]: { tone: "neutral", label: "Skipped" },
};

/** Whether a test's results are a spec's (each named by its `test()`). */
export const isSpecResult = (results: readonly StepResult[]) => results.some((r) => r.name !== "");

export function SpecStepList({
  results,
  artifacts = [],
}: {
  results: readonly StepResult[];
  artifacts?: readonly Artifact[];
}) {
  return (
    <ol className="steps">
      {results.map((result) => {
        const state = states[result.status];
        const failed = result.status === TestStatus.FAILED;
        const traced = artifacts.some((a) => a.kind === ArtifactKind.TRACE && a.step === result.number);
        return (
          <li
            key={result.number}
            className={`step${failed ? " step-failed" : ""}${result.status === TestStatus.SKIPPED ? " step-not-run" : ""}`}
            aria-current={failed ? "step" : undefined}
          >
            <div className="step-head">
              <span className="step-number" aria-hidden="true">
                {result.number}
              </span>
              <h3>
                <span className="visually-hidden">Test {result.number}: </span>
                {result.name}
              </h3>
              {state && <Badge tone={state.tone}>{state.label}</Badge>}
              <span className="muted small step-took">{duration(result.durationMs)}</span>
            </div>
            {failed && result.error && (
              <p className="notice notice-error step-reason">
                <strong>Why it failed:</strong> {result.error}
              </p>
            )}
            {traced && <p className="muted small">Its trace is kept (Open trace, above).</p>}
          </li>
        );
      })}
    </ol>
  );
}
