// Rows of name and value in a step's form (headers, query parameters, saved values, JSON checks).
import { useId } from "react";
import { controlNotes, FieldNotes } from "../../components/Field";
import type { Said } from "./kind-editor";
import type { Pair } from "./model";
import { Bound, describedOnly, inSentence } from "./row-notes";

/**
 * Name and value rows, in order. A row's messages come from `said(index)`; the row's error marks
 * its name (the catalog names a map entry by its key), and describes both controls.
 */
export function PairRows({
  label,
  nameLabel,
  valueLabel,
  rows,
  onChange,
  said,
  listSaid,
  max,
  addLabel,
  namePlaceholder,
  valuePlaceholder,
  codeValue = true,
}: {
  /** One entry, for the controls' names: "Header" gives "Header 2 name". */
  label: string;
  nameLabel: string;
  valueLabel: string;
  rows: Pair[];
  onChange: (rows: Pair[]) => void;
  said: (index: number) => Said;
  /** About the list as a whole (too many entries). */
  listSaid: Said;
  max: number;
  addLabel: string;
  namePlaceholder?: string;
  valuePlaceholder?: string;
  codeValue?: boolean;
}) {
  const id = useId();
  const set = (index: number, change: Partial<Pair>) =>
    onChange(rows.map((row, i) => (i === index ? { ...row, ...change } : row)));
  return (
    <div className="rows">
      {rows.length > 0 && (
        <div className="row-labels" aria-hidden="true">
          <span>{nameLabel}</span>
          <span>{valueLabel}</span>
        </div>
      )}
      {rows.map((row, index) => {
        const notes = said(index);
        const rowId = `${id}-${index}`;
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity beyond their place
          <div key={index} className="row">
            <div className="row-controls">
              {/* Each control's column name shows beside it where the columns stack (narrow screens). */}
              <span className="row-field">
                <span className="row-field-label" aria-hidden="true">
                  {nameLabel}
                </span>
                <input
                  className="input input-code"
                  aria-label={`${label} ${index + 1}: ${nameLabel}`}
                  placeholder={namePlaceholder}
                  autoCapitalize="off"
                  spellCheck={false}
                  value={row.name}
                  onChange={(event) => set(index, { name: event.target.value })}
                  {...controlNotes(rowId, { error: notes.error })}
                />
              </span>
              <span className="row-field">
                <span className="row-field-label" aria-hidden="true">
                  {valueLabel}
                </span>
                <input
                  className={`input${codeValue ? " input-code" : ""}`}
                  aria-label={`${label} ${index + 1}: ${valueLabel}`}
                  placeholder={valuePlaceholder}
                  autoCapitalize="off"
                  spellCheck={false}
                  value={row.value}
                  onChange={(event) => set(index, { value: event.target.value })}
                  {...describedOnly(rowId, notes)}
                />
              </span>
              <button
                type="button"
                className="button button-small button-quiet"
                aria-label={`Remove ${inSentence(label)} ${index + 1}${row.name ? ` (${row.name})` : ""}`}
                onClick={() => onChange(rows.filter((_, i) => i !== index))}
              >
                Remove
              </button>
            </div>
            <div className="field row-notes">
              <FieldNotes id={rowId} error={notes.error} warning={notes.warning} />
            </div>
          </div>
        );
      })}
      <div className="rows-foot field">
        <button
          type="button"
          className="button button-small"
          disabled={rows.length >= max}
          onClick={() => onChange([...rows, { name: "", value: "" }])}
          {...(listSaid.error && { "data-error-focus": true, "aria-describedby": `${id}-list-error` })}
        >
          {addLabel}
        </button>
        <Bound count={rows.length} max={max} what={`${inSentence(label)}s`} />
        <FieldNotes id={`${id}-list`} error={listSaid.error} />
      </div>
    </div>
  );
}
