import { ItemOutcome } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { ReactNode, RefObject } from "react";
import { DataTable } from "../../components/DataTable";
import { DialogActions, ErrorNotice } from "../../components/Dialog";
import { Badge } from "../../components/Status";
import { plural } from "../../format";
import { kindOf, othersSentence, type Preview, previewSummary, type Row, rowsOf } from "./import-model";
import { VariablesToSet } from "./VariablesToSet";

const outcomeBadge: Record<ItemOutcome, ReactNode> = {
  [ItemOutcome.UNSPECIFIED]: <Badge tone="bad">Problem</Badge>,
  [ItemOutcome.CREATED]: <Badge tone="good">New</Badge>,
  [ItemOutcome.CHANGED]: <Badge tone="active">Changed</Badge>,
  [ItemOutcome.UNCHANGED]: <Badge tone="neutral">Unchanged</Badge>,
};

/** What the import would do, item by item with each item's problems; Apply when nothing is wrong. */
export function PreviewOf({
  preview,
  projectId,
  outcome,
  applying,
  error,
  onBack,
  onApply,
}: {
  preview: Preview;
  projectId: string;
  outcome: RefObject<HTMLDivElement | null>;
  applying: boolean;
  error: unknown;
  onBack: () => void;
  onApply: () => void;
}) {
  const { result, problems, general } = preview;
  const rows = rowsOf(result);
  const bad = rows.filter((row) => problems.has(row.path));
  const attention = rows.filter((row) => row.outcome !== ItemOutcome.UNCHANGED || problems.has(row.path));
  const unchanged = rows.filter((row) => row.outcome === ItemOutcome.UNCHANGED && !problems.has(row.path));
  const refused = bad.length > 0 || general.length > 0;
  const nothingToDo = !refused && attention.length === 0;
  const table = (shown: Row[]) => (
    <DataTable
      rows={shown.map((row) => ({ ...row, id: row.path }))}
      columns={[
        {
          label: "Item",
          cell: (row) => (
            <span className="cell-lines">
              {row.kind}
              <code className="muted small">{row.path}</code>
            </span>
          ),
        },
        {
          label: "Name",
          className: "cell-strong",
          cell: (row) => row.name || <span className="muted">—</span>,
        },
        {
          label: "Result",
          className: "cell-result",
          cell: (row) => (
            <span className="import-result">
              {outcomeBadge[row.outcome]}
              {row.outcome === ItemOutcome.CHANGED && (
                <span className="small">{row.changedFields.join(", ")}</span>
              )}
              {row.kind === kindOf.variables && row.outcome === ItemOutcome.CREATED && (
                <span className="small">without a value</span>
              )}
              {problems.has(row.path) && (
                <ul className="import-problems" aria-label={`Problems of ${row.path}`}>
                  {problems.get(row.path)?.map(([field, description]) => (
                    <li key={`${field}: ${description}`}>
                      {field && <code>{field}</code>} {description}
                    </li>
                  ))}
                </ul>
              )}
            </span>
          ),
        },
      ]}
    />
  );
  return (
    <div className="stack">
      {result.fromOtherProject && (
        <p className="notice notice-info">
          This file comes from another project: its ids name that project's items, so its test cases and plans
          are matched to this project's by name, and created where none has the name.
        </p>
      )}
      <div
        ref={outcome}
        tabIndex={-1}
        className={`notice ${refused ? "notice-error" : "notice-info"}`}
        role={refused ? "alert" : "status"}
      >
        {refused ? (
          <>
            {bad.length > 0 &&
              `${plural(bad.length, "item has", "items have")} problems, listed with each below. `}
            {general.map((text) => (
              <span key={text}>{text}. </span>
            ))}
            Fix the file and preview it again: nothing is imported while any item has a problem.
          </>
        ) : nothingToDo ? (
          "Everything in the file is already in the project: there is nothing to import."
        ) : (
          previewSummary(result)
        )}
      </div>
      {attention.length > 0 && <div className="import-preview">{table(attention)}</div>}
      {unchanged.length > 0 && (
        <details className="import-unchanged" open={attention.length === 0}>
          <summary>{plural(unchanged.length, "item")} already as in the file, left alone</summary>
          <div className="import-preview">{table(unchanged)}</div>
        </details>
      )}
      {(result.otherTestCases > 0 || result.otherTestPlans > 0) && (
        <p className="muted small">{othersSentence(result)}</p>
      )}
      {!refused && <VariablesToSet result={result} projectId={projectId} />}
      <ErrorNotice error={error} />
      <DialogActions
        onCancel={onBack}
        cancelLabel="Choose another file"
        label="Apply"
        busyLabel="Applying…"
        busy={applying}
        disabled={refused || nothingToDo}
        onConfirm={onApply}
      />
    </div>
  );
}
