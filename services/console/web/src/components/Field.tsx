// One form field, the same in every form: its label, the control, the error right under it and a
// hint, wired together for assistive technology (the control is described by the error, then the
// hint, and marked invalid while it has an error).
import { type ReactNode, type RefObject, useEffect, useId } from "react";

/** What the control of a field must carry: spread onto the input, select or textarea. */
export interface ControlProps {
  id: string;
  required?: boolean;
  "aria-describedby"?: string;
  "aria-invalid"?: true;
}

interface FieldProps {
  label: ReactNode;
  /** How to fill it in, under the control. */
  hint?: ReactNode;
  /** What is wrong with the value, under the control (e.g. a service's field violation). */
  error?: string;
  /**
   * The control must have a value. Forms that let the service check (`noValidate`) still tell
   * assistive technology so.
   */
  required?: boolean;
  /** Says "(optional)" after the label. */
  optional?: boolean;
  children: (control: ControlProps) => ReactNode;
}

export function Field({ label, hint, error, required, optional, children }: FieldProps) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>
        {label}
        {optional && <span className="muted field-optional"> (optional)</span>}
      </label>
      {children({
        id,
        ...(required && { required }),
        ...describedBy(id, hint, error),
        ...(error && { "aria-invalid": true as const }),
      })}
      <FieldNotes id={id} hint={hint} error={error} />
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
    <fieldset className="field" {...describedBy(id, hint, error)}>
      <legend>{legend}</legend>
      {children}
      <FieldNotes id={id} hint={hint} error={error} />
    </fieldset>
  );
}

/** The error first: it is what a screen reader user needs to hear to fix the value. */
function describedBy(id: string, hint: ReactNode, error: string | undefined) {
  const ids = [error && `${id}-error`, hint && `${id}-hint`].filter(Boolean).join(" ");
  return ids ? { "aria-describedby": ids } : {};
}

function FieldNotes({ id, hint, error }: { id: string; hint?: ReactNode; error?: string }) {
  return (
    <>
      {error && (
        <small id={`${id}-error`} className="field-error">
          {error}
        </small>
      )}
      {hint && <small id={`${id}-hint`}>{hint}</small>}
    </>
  );
}

/**
 * After a refused save, moves focus to the first field with an error (keyboard and screen reader
 * users land where the fix is), else leaves it where it is.
 */
export function useFocusOnError(form: RefObject<HTMLFormElement | null>, error: unknown): void {
  useEffect(() => {
    if (error) form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [form, error]);
}
