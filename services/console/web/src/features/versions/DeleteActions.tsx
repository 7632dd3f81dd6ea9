// The buttons of a delete dialog made on the version a page shows (test cases, test plans).
import { editConflictOf } from "../../api";
import { DialogActions, ErrorNotice } from "../../components/Dialog";
import { DeleteConflict } from "./DeleteConflict";

/**
 * The end of a delete dialog (test case, test plan): a delete refused on an old version says who
 * and when (DeleteConflict); any other failure shows above the buttons, Delete and Cancel.
 */
export function DeleteActions({
  error,
  label,
  busy,
  onConfirm,
  onCancel,
  onLook,
}: {
  /** The delete's failure, if any. */
  error: unknown;
  label: string;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  /** After a conflict: read the current version again and close. */
  onLook: () => void;
}) {
  const conflict = editConflictOf(error);
  if (conflict) return <DeleteConflict conflict={conflict} onCancel={onCancel} onLook={onLook} />;
  return (
    <>
      <ErrorNotice error={error} />
      <DialogActions
        onCancel={onCancel}
        label={label}
        busyLabel="Deleting…"
        busy={busy}
        danger
        onConfirm={onConfirm}
      />
    </>
  );
}
