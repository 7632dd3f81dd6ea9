import type { PreviewRunResponse } from "@testrun/gen/testrun/console/v1/console_pb";
import { ErrorNotice } from "../../components/Dialog";
import { count, plural } from "../../format";
import { GrantedBy } from "../credits/CreditsHelp";

/** What the chosen run costs ("N tests · N credits · balance B"), and whether the balance covers it. */
export function RunCost({
  chosen,
  nothingChosen,
  error,
  preview,
  fetching,
}: {
  /** Something to run is chosen. */
  chosen: boolean;
  /** What to say until it is. */
  nothingChosen: string;
  error: unknown;
  preview: PreviewRunResponse | undefined;
  fetching: boolean;
}) {
  return (
    <div className="preview" role="status" aria-live="polite">
      {!chosen ? (
        <span className="muted">{nothingChosen}</span>
      ) : error ? (
        <ErrorNotice error={error} />
      ) : preview ? (
        <>
          <p className="preview-line" aria-busy={fetching}>
            <strong>{plural(preview.testCount, "test")}</strong> · {plural(preview.testCount, "credit")} ·
            balance {count(preview.balance)}
          </p>
          <p className="muted small">on {preview.environment?.name}</p>
          {BigInt(preview.testCount) > preview.balance && (
            <p className="notice notice-warning">
              Not enough credits: this run needs {plural(preview.testCount, "credit")}; the project has{" "}
              {count(preview.balance)}. <GrantedBy />
            </p>
          )}
        </>
      ) : (
        <span className="muted">Working out the cost…</span>
      )}
    </div>
  );
}
