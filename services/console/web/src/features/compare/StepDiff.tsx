// How a test case's steps differ between the base's version and the run's: a step added or removed
// shows whole, a changed one as the fields that differ (before → after), each with both versions'
// JSON behind a disclosure. Steps show as stored: `{{NAME}}` stays a name, never a value.
import type { StepChange } from "@testrun/gen/testrun/runs/v1/runs_pb";
import { plural } from "../../format";
import { fieldChanges, stepName } from "./compare-format";

const verb: Record<string, string> = { added: "added", removed: "removed", changed: "changed" };

export function StepDiff({ changes }: { changes: readonly StepChange[] }) {
  if (!changes.length) return null;
  return (
    <ol className="step-diff" aria-label={`${plural(changes.length, "step")} changed`}>
      {changes.map((change) => {
        const name = stepName(change.after || change.before);
        return (
          <li key={`${change.change}-${change.number}`} className={`step-diff-${change.change}`}>
            <p className="step-diff-head">
              Step {change.number} {verb[change.change] ?? change.change}
              {name && <span className="muted">: {name}</span>}
            </p>
            {change.change === "changed" ? (
              <>
                <ul className="step-diff-fields">
                  {fieldChanges(change.before, change.after).map((field) => (
                    <li key={field.path}>
                      <code className="step-diff-path">{field.path}</code>{" "}
                      {field.before ? <del>{field.before}</del> : <span className="muted">(none)</span>}
                      {" → "}
                      {field.after ? <ins>{field.after}</ins> : <span className="muted">(none)</span>}
                    </li>
                  ))}
                </ul>
                <details className="step-diff-json">
                  <summary>Both versions of step {change.number}</summary>
                  <pre>
                    <del>− {change.before}</del>
                    {"\n"}
                    <ins>+ {change.after}</ins>
                  </pre>
                </details>
              </>
            ) : (
              <pre className="step-diff-whole">
                {change.change === "removed" ? <del>− {change.before}</del> : <ins>+ {change.after}</ins>}
              </pre>
            )}
          </li>
        );
      })}
    </ol>
  );
}
