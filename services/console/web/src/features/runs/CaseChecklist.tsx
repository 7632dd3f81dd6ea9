import type { UseQueryResult } from "@tanstack/react-query";
import type { ListTestCasesResponse } from "@testrun/gen/testrun/console/v1/console_pb";
import { ErrorNotice } from "../../components/Dialog";
import { FieldSet } from "../../components/Field";
import { plural } from "../../format";
import { toggled } from "./toggled";

/** The test cases to run, picked from a checklist searched by name. */
export function CaseChecklist({
  search,
  onSearch,
  searched,
  matching,
  chosen,
  onChoose,
}: {
  search: string;
  onSearch: (search: string) => void;
  /** The search the checklist shows (deferred while typing). */
  searched: string;
  matching: UseQueryResult<ListTestCasesResponse>;
  chosen: string[];
  onChoose: (ids: string[]) => void;
}) {
  return (
    <FieldSet legend="Test cases">
      <input
        className="input"
        type="search"
        placeholder="Search by name"
        aria-label="Search test cases by name"
        value={search}
        onChange={(e) => onSearch(e.target.value)}
      />
      <ErrorNotice error={matching.error} />
      <div className="checklist" aria-busy={matching.isFetching}>
        {matching.isPending && <p className="muted small">Loading test cases…</p>}
        {matching.data?.testCases.length === 0 && (
          <p className="muted small">No test case matches “{searched}”.</p>
        )}
        {matching.data?.testCases.map((testCase) => (
          <label key={testCase.id} className="checklist-item">
            <input
              type="checkbox"
              checked={chosen.includes(testCase.id)}
              onChange={() => onChoose(toggled(chosen, testCase.id))}
            />
            <span>
              {testCase.name}
              {!testCase.enabled && <span className="muted small"> · disabled (runs when chosen)</span>}
            </span>
          </label>
        ))}
        {matching.data?.truncated && (
          <p className="muted small">Only the first 500 are listed: search to narrow them down.</p>
        )}
      </div>
      <small aria-live="polite">
        {plural(chosen.length, "test case")} chosen
        {chosen.length > 0 && (
          <>
            {" · "}
            <button type="button" className="link-button" onClick={() => onChoose([])}>
              clear
            </button>
          </>
        )}
      </small>
    </FieldSet>
  );
}
