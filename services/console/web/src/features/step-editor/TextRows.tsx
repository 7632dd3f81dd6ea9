// Rows of one text each in a step's form (texts the body must contain, options to select).
import { useId } from "react";
import { controlNotes, FieldNotes } from "../../components/Field";
import type { Said } from "./kind-editor";
import { Bound, inSentence } from "./row-notes";

/** Rows of one text each (texts the body must contain…). */
export function TextRows({
  label,
  rows,
  onChange,
  said,
  listSaid,
  max,
  addLabel,
  placeholder,
}: {
  label: string;
  rows: string[];
  onChange: (rows: string[]) => void;
  said: (index: number) => Said;
  listSaid: Said;
  max: number;
  addLabel: string;
  placeholder?: string;
}) {
  const id = useId();
  return (
    <div className="rows">
      {rows.map((text, index) => {
        const notes = said(index);
        const rowId = `${id}-${index}`;
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity beyond their place
          <div key={index} className="row">
            <div className="row-controls row-controls-single">
              <input
                className="input input-code"
                aria-label={`${label} ${index + 1}`}
                placeholder={placeholder}
                spellCheck={false}
                value={text}
                onChange={(event) => onChange(rows.map((row, i) => (i === index ? event.target.value : row)))}
                {...controlNotes(rowId, notes)}
              />
              <button
                type="button"
                className="button button-small button-quiet"
                aria-label={`Remove ${inSentence(label)} ${index + 1}`}
                onClick={() => onChange(rows.filter((_, i) => i !== index))}
              >
                Remove
              </button>
            </div>
            <div className="field row-notes">
              <FieldNotes id={rowId} {...notes} />
            </div>
          </div>
        );
      })}
      <div className="rows-foot field">
        <button
          type="button"
          className="button button-small"
          disabled={rows.length >= max}
          onClick={() => onChange([...rows, ""])}
          {...(listSaid.error && { "data-error-focus": true, "aria-describedby": `${id}-list-error` })}
        >
          {addLabel}
        </button>
        <Bound count={rows.length} max={max} what="texts" />
        <FieldNotes id={`${id}-list`} error={listSaid.error} />
      </div>
    </div>
  );
}
