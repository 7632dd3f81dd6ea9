// A modal dialog on the native <dialog>: focus moves in and back, Esc closes, the page behind is inert.
import { type ReactNode, useEffect, useId, useRef } from "react";
import { messageOf } from "../api";

/** Whether a dialog is open, and what closes it (Esc, Cancel, or done). */
export interface DialogProps {
  open: boolean;
  onClose: () => void;
}

export function Dialog({
  title,
  open,
  onClose,
  wide = false,
  children,
}: DialogProps & {
  title: string;
  /** Room for a table (an import's preview; a conflict's text to copy), where a form needs less. */
  wide?: boolean;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  // Where focus was before the dialog opened, to put it back when it closes (browsers mostly do,
  // but not when the opener re-rendered meanwhile).
  const opener = useRef<HTMLElement | null>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      dialog.showModal();
    }
    if (!open && dialog.open) {
      dialog.close();
      if (opener.current?.isConnected) opener.current.focus();
      opener.current = null;
    }
  }, [open]);
  return (
    <dialog
      ref={ref}
      className={wide ? "dialog dialog-wide" : "dialog"}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      {open && (
        <>
          <h2 id={titleId}>{title}</h2>
          {children}
        </>
      )}
    </dialog>
  );
}

/** A failed call's message inside a dialog or form; nothing when there is none. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p className="notice notice-error" role="alert">
      {messageOf(error)}
    </p>
  );
}

/**
 * A dialog's buttons: Cancel (or `cancelLabel`, where "Cancel" would be ambiguous), then the one
 * that acts (a submit button unless `onConfirm` is given).
 */
export function DialogActions({
  onCancel,
  cancelLabel = "Cancel",
  label,
  busyLabel,
  busy,
  disabled = false,
  danger = false,
  onConfirm,
}: {
  onCancel: () => void;
  cancelLabel?: string;
  label: string;
  busyLabel: string;
  busy: boolean;
  /** The action cannot be taken yet (the form says why). */
  disabled?: boolean;
  danger?: boolean;
  onConfirm?: () => void;
}) {
  return (
    <div className="dialog-actions">
      <button type="button" className="button" onClick={onCancel}>
        {cancelLabel}
      </button>
      <button
        type={onConfirm ? "button" : "submit"}
        className={`button ${danger ? "button-danger" : "button-primary"}`}
        disabled={busy || disabled}
        aria-busy={busy}
        onClick={onConfirm}
      >
        {busy ? busyLabel : label}
      </button>
    </div>
  );
}
