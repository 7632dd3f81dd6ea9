// The plan editor's picker: the project's test cases found by name, each ticked while it is in the
// plan; ticking adds at the end, "Add all" adds every one listed (while the plan has room).
import { useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import type { TestCase } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { ConsoleService } from "@testrun/gen/testrun/console/v1/console_pb";
import { type RefObject, useDeferredValue, useId, useState } from "react";
import { Link } from "react-router";
import { Failed, Loading } from "../../components/States";
import { Badge } from "../../components/Status";
import { useProject } from "../../project";
import { planBound } from "./plan-draft";

/** The project's test cases found by name, each ticked while it is in the plan. */
export function CasePicker({
  projectId,
  chosen,
  full,
  searchRef,
  onToggle,
  onAddAll,
}: {
  projectId: string;
  chosen: TestCase[];
  full: boolean;
  searchRef: RefObject<HTMLInputElement | null>;
  onToggle: (testCase: TestCase) => void;
  onAddAll: (listed: TestCase[]) => void;
}) {
  const { path } = useProject();
  const ids = useId();
  const [search, setSearch] = useState("");
  const searched = useDeferredValue(search.trim());
  const listed = useQuery(
    ConsoleService.method.listTestCases,
    { projectId, search: searched },
    { placeholderData: keepPreviousData },
  );
  const inPlan = new Set(chosen.map((c) => c.id));
  const cases = listed.data?.testCases ?? [];
  const addable = cases.filter((c) => !inPlan.has(c.id)).length;
  return (
    <section className="panel plan-panel" aria-labelledby={`${ids}-title`}>
      <div className="section-head">
        <h2 id={`${ids}-title`}>Add test cases</h2>
        {addable > 0 && !full && (
          <button type="button" className="button button-small" onClick={() => onAddAll(cases)}>
            Add all {addable} listed
          </button>
        )}
      </div>
      <input
        ref={searchRef}
        className="input"
        type="search"
        placeholder="Name contains…"
        aria-label="Search test cases by name"
        value={search}
        onChange={(e) => setSearch(e.target.value)}
      />
      <div className="checklist plan-picker" aria-busy={listed.isFetching}>
        {listed.isPending && <Loading what="test cases" />}
        {listed.error ? <Failed error={listed.error} retry={() => void listed.refetch()} /> : null}
        {listed.data && cases.length === 0 && (
          <p className="muted small">
            {searched ? (
              `No test case matches “${searched}”.`
            ) : (
              <>
                This project has no test cases yet: see the <Link to={path("/test-cases")}>Test cases</Link>{" "}
                page.
              </>
            )}
          </p>
        )}
        {cases.map((testCase) => {
          const ticked = inPlan.has(testCase.id);
          return (
            <label key={testCase.id} className="checklist-item">
              <input
                type="checkbox"
                checked={ticked}
                disabled={!ticked && full}
                onChange={() => onToggle(testCase)}
              />
              <span>
                {testCase.name}
                {!testCase.enabled && (
                  <>
                    {" "}
                    <Badge tone="neutral">Disabled</Badge>
                  </>
                )}
                {testCase.tags.length > 0 && (
                  <span className="muted small"> · {testCase.tags.join(", ")}</span>
                )}
              </span>
            </label>
          );
        })}
      </div>
      {full && cases.length > 0 && (
        <p className="muted small">The plan is full: remove a test case from it to add another.</p>
      )}
      {listed.data?.truncated && (
        <p className="muted small">
          More than {planBound} test cases match: only the first {planBound} are listed. Search by name to
          find the others.
        </p>
      )}
    </section>
  );
}
