// The plan editor's list of chosen test cases, in run order: each row moved by its arrow buttons or
// by Alt+↑/↓ while focused, or removed; what is wrong with the list said above it.
import type { TestCase } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { useId } from "react";
import { Empty } from "../../components/States";
import { Badge } from "../../components/Status";
import { plural } from "../../format";
import { planBound } from "./plan-draft";
import type { usePlanCases } from "./usePlanCases";

export function PlanCases({
  cases,
  error,
  gone,
}: {
  cases: ReturnType<typeof usePlanCases>;
  /** The catalog's word on the list as a whole. */
  error: string | undefined;
  /** A chosen case deleted since it was picked (a refused save named it). */
  gone: TestCase | undefined;
}) {
  const ids = useId();
  const { chosen, full, announcement, list, move, remove, onRowKey } = cases;
  const disabledCount = chosen.filter((c) => !c.enabled).length;
  return (
    <section className="panel plan-panel" aria-labelledby={`${ids}-chosen`}>
      <div className="section-head">
        <h2 id={`${ids}-chosen`}>Test cases, in run order</h2>
        <span className="muted small plan-count">
          {chosen.length} of at most {planBound}
        </span>
      </div>
      <p className="muted small" id={`${ids}-keys`}>
        Move a test case with its arrow buttons, or focus its row and press Alt+↑ or Alt+↓ (↑ and ↓ alone go
        from row to row).{" "}
        {disabledCount > 0 &&
          `${plural(disabledCount, "disabled test case")}: runs of the plan leave ${disabledCount === 1 ? "it" : "them"} out.`}
      </p>
      {error && (
        <p className="field-error notice notice-error" role="alert">
          {error}
        </p>
      )}
      {gone && (
        <p className="notice notice-error" role="alert">
          “{gone.name}” was deleted since it was picked: remove it and save again.
        </p>
      )}
      {full && (
        <p className="notice notice-warning" role="status">
          The plan holds {planBound} test cases, the most a plan can (one run holds at most {planBound}).
          Remove one to add another.
        </p>
      )}
      {chosen.length === 0 ? (
        <Empty title="No test cases in this plan yet.">
          <p>
            Tick them under “Add test cases”. A plan without enabled test cases cannot be run, but it can be
            saved.
          </p>
        </Empty>
      ) : (
        <ol
          ref={list}
          className="plan-cases"
          aria-labelledby={`${ids}-chosen`}
          aria-describedby={`${ids}-keys`}
        >
          {chosen.map((testCase, index) => (
            <li
              key={testCase.id}
              data-case={testCase.id}
              className={`plan-case${gone?.id === testCase.id ? " plan-case-gone" : ""}`}
              // biome-ignore lint/a11y/noNoninteractiveTabindex: a row is focused to move it with Alt+↑/↓
              tabIndex={0}
              aria-label={`${testCase.name}, ${index + 1} of ${chosen.length}${testCase.enabled ? "" : ", disabled"}`}
              onKeyDown={(event) => onRowKey(event, index)}
            >
              <span className="plan-case-number" aria-hidden="true">
                {index + 1}
              </span>
              <span className="plan-case-name">
                {testCase.name}
                {!testCase.enabled && (
                  <>
                    {" "}
                    <Badge tone="neutral">Disabled</Badge>
                  </>
                )}
              </span>
              <span className="plan-case-actions">
                <button
                  type="button"
                  className="button button-small"
                  aria-label={`Move ${testCase.name} up`}
                  title="Move up (Alt+↑)"
                  disabled={index === 0}
                  onClick={() => move(index, -1)}
                >
                  ↑
                </button>
                <button
                  type="button"
                  className="button button-small"
                  aria-label={`Move ${testCase.name} down`}
                  title="Move down (Alt+↓)"
                  disabled={index === chosen.length - 1}
                  onClick={() => move(index, 1)}
                >
                  ↓
                </button>
                <button
                  type="button"
                  className="button button-small"
                  aria-label={`Remove ${testCase.name}`}
                  onClick={() => remove(index)}
                >
                  Remove
                </button>
              </span>
            </li>
          ))}
        </ol>
      )}
      <p className="visually-hidden" role="status" aria-live="polite">
        {announcement}
      </p>
    </section>
  );
}
