// One form field: its label, its hint, and the error the catalog gave for it, tied to the control
// for screen readers (aria-describedby, aria-invalid). The authoring forms use it; the shared
// Field.tsx made alongside is meant to replace it when both are merged.
import { type ReactNode, type RefObject, useEffect, useId } from "react";

/** What the control inside a field must carry to be labelled and described. */
export interface ControlProps {
  id: string;
  "aria-describedby"?: string;
  "aria-invalid"?: true;
  "aria-required"?: true;
}

export function FormField({
  label,
  hint,
  error,
  required = false,
  children,
}: {
  label: string;
  hint?: ReactNode;
  /** What is wrong with the value, as the catalog said it; nothing when it is fine. */
  error?: string;
  required?: boolean;
  children: (control: ControlProps) => ReactNode;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [error && errorId, hint && hintId].filter(Boolean).join(" ");
  return (
    <div className="field">
      <label htmlFor={id}>
        {label}
        {!required && <span className="muted field-optional"> (optional)</span>}
      </label>
      {children({
        id,
        ...(describedBy && { "aria-describedby": describedBy }),
        ...(error && { "aria-invalid": true as const }),
        ...(required && { "aria-required": true as const }),
      })}
      {error && (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      )}
      {hint && (
        <small id={hintId} className="field-hint">
          {hint}
        </small>
      )}
    </div>
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
