// One form field, the same in every form: its label, the control, a hint and the error under it,
// wired together for assistive technology (the control is described by the hint and the error).
import { type ReactNode, useId } from "react";

/** What the control of a field must carry: spread onto the input, select or textarea. */
export interface ControlProps {
  id: string;
  required?: boolean;
  "aria-describedby"?: string;
  "aria-invalid"?: boolean;
}

interface FieldProps {
  label: ReactNode;
  /** How to fill it in, under the control. */
  hint?: ReactNode;
  /** What is wrong with the value, under the control (e.g. a service's field violation). */
  error?: string;
  /** The control must have a value (the browser says so before submitting). */
  required?: boolean;
  /** Says "(optional)" after the label. */
  optional?: boolean;
  children: (control: ControlProps) => ReactNode;
}

export function Field({ label, hint, error, required, optional, children }: FieldProps) {
  const id = useId();
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(" ");
  return (
    <div className="field">
      <label htmlFor={id}>
        {label}
        {optional && <span className="muted"> (optional)</span>}
      </label>
      {children({
        id,
        ...(required && { required }),
        ...(described && { "aria-describedby": described }),
        ...(error && { "aria-invalid": true }),
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
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(" ");
  return (
    <fieldset className="field" aria-describedby={described || undefined}>
      <legend>{legend}</legend>
      {children}
      <FieldNotes id={id} hint={hint} error={error} />
    </fieldset>
  );
}

function FieldNotes({ id, hint, error }: { id: string; hint?: ReactNode; error?: string }) {
  return (
    <>
      {hint && <small id={`${id}-hint`}>{hint}</small>}
      {error && (
        <small id={`${id}-error`} className="field-error">
          {error}
        </small>
      )}
    </>
  );
}
