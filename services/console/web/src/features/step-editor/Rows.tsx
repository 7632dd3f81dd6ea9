// The editor's repeated controls: rows of name and value (headers, query, saved values, JSON
// checks), rows of one text (body contains…), and a section that folds away when
// empty but opens by itself while it has something to say.
import { type ReactNode, useId, useState } from "react";
import { controlNotes, FieldNotes } from "../../components/Field";
import type { Pair } from "./model";

/** What the editor says about one field: its error (a save was refused) and warning. */
export interface Said {
  error?: string | undefined;
  warning?: string | undefined;
}

/** A part of a step that folds; open when first shown with content, and whenever it has a message. */
export function Section({
  title,
  count,
  initiallyOpen,
  attention,
  children,
}: {
  title: string;
  /** Shown after the title while folded: how many entries, or which body. */
  count?: string;
  initiallyOpen: boolean;
  /** Something inside has an error or a warning: open, so it is seen (and focus can reach it). */
  attention: boolean;
  children: ReactNode;
}) {
  const [open, setOpen] = useState(initiallyOpen);
  return (
    <details
      className="editor-section"
      open={open || attention}
      onToggle={(event) => setOpen(event.currentTarget.open)}
    >
      <summary>
        <span className="editor-section-title">{title}</span>
        {count && <span className="editor-section-count">{count}</span>}
        {attention && <span className="editor-section-flag">needs a look</span>}
      </summary>
      <div className="editor-section-body">{children}</div>
    </details>
  );
}

/** A label inside a sentence: "Header check" -> "header check", "JSON check" stays. */
const inSentence = (label: string) =>
  /^[A-Z][a-z]/.test(label) ? label.charAt(0).toLowerCase() + label.slice(1) : label;

/** Described by a row's notes without being the control they mark invalid (a row's value). */
function describedOnly(rowId: string, { error, warning }: Said) {
  const ids = [error && `${rowId}-error`, warning && `${rowId}-warning`].filter(Boolean).join(" ");
  return ids ? { "aria-describedby": ids } : {};
}

/** "3 of 50": shown beside an Add button; at the bound the button is off and says why. */
function Bound({ count, max, what }: { count: number; max: number; what: string }) {
  if (count < max) return null;
  return (
    <small className="muted" role="status">
      {max} {what}: the most a step takes.
    </small>
  );
}

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
