// One form field, the same in every form: its label, the control, the error right under it, a
// warning and a hint, wired together for assistive technology (the control is described by the
// error, then the warning, then the hint, and marked invalid while it has an error).
import { type ReactNode, type RefObject, useEffect, useId } from "react";

/** What the control of a field must carry: spread onto the input, select or textarea. */
export interface ControlProps {
  id: string;
  required?: boolean;
  "aria-describedby"?: string;
  "aria-invalid"?: true;
}

/** What a field says around its control (TextField and the other field primitives take the same). */
export interface FieldProps {
  label: ReactNode;
  /** How to fill it in, under the control. */
  hint?: ReactNode;
  /** What is wrong with the value, under the control (e.g. a service's field violation). */
  error?: string;
  /** What may be wrong but does not stop a save (a `{{NAME}}` no variable has yet). */
  warning?: string;
  /**
   * The control must have a value. Forms that let the service check (`noValidate`) still tell
   * assistive technology so.
   */
  required?: boolean;
  /** Says "(optional)" after the label. */
  optional?: boolean;
  children: (control: ControlProps) => ReactNode;
}

export function Field({ label, hint, error, warning, required, optional, children }: FieldProps) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>
        {label}
        {optional && <span className="muted field-optional"> (optional)</span>}
      </label>
      {children({ id, ...(required && { required }), ...controlNotes(id, { hint, error, warning }) })}
      <FieldNotes id={id} hint={hint} error={error} warning={warning} />
    </div>
  );
}

/** A group of controls (radio buttons, checkboxes) under one legend, with a hint and an error. */
export function FieldSet({
  legend,
  hint,
  error,
  children,
}: Omit<FieldProps, "label" | "children" | "required" | "optional"> & {
  legend: ReactNode;
  children: ReactNode;
}) {
  const id = useId();
  return (
    <fieldset className="field" {...describedBy(id, { hint, error })}>
      <legend>{legend}</legend>
      {children}
      <FieldNotes id={id} hint={hint} error={error} />
    </fieldset>
  );
}

/** What is said about a control: shown under it by FieldNotes (same `id`). */
export interface Notes {
  hint?: ReactNode;
  error?: string | undefined;
  warning?: string | undefined;
}

/** The error first: it is what a screen reader user needs to hear to fix the value. */
function describedBy(id: string, { hint, error, warning }: Notes) {
  const ids = [error && `${id}-error`, warning && `${id}-warning`, hint && `${id}-hint`]
    .filter(Boolean)
    .join(" ");
  return ids ? { "aria-describedby": ids } : {};
}

/**
 * The attributes of a control that FieldNotes describes (for controls laid out without Field, such
 * as the name and value of a row): described by its notes, invalid while there is an error.
 */
export function controlNotes(id: string, notes: Notes): Omit<ControlProps, "id"> {
  return { ...describedBy(id, notes), ...(notes.error && { "aria-invalid": true as const }) };
}

export function FieldNotes({ id, hint, error, warning }: Notes & { id: string }) {
  return (
    <>
      {error && (
        <small id={`${id}-error`} className="field-error">
          {error}
        </small>
      )}
      {warning && (
        <small id={`${id}-warning`} className="field-warning">
          {warning}
        </small>
      )}
      {hint && <small id={`${id}-hint`}>{hint}</small>}
    </>
  );
}

/**
 * After a refused save, moves focus to the first field with an error (keyboard and screen reader
 * users land where the fix is), else leaves it where it is. An error that belongs to no single
 * control (a list as a whole) marks the control to land on with `data-error-focus`.
 */
export function useFocusOnError(form: RefObject<HTMLFormElement | null>, error: unknown): void {
  useEffect(() => {
    if (error) form.current?.querySelector<HTMLElement>('[aria-invalid="true"], [data-error-focus]')?.focus();
  }, [form, error]);
}
