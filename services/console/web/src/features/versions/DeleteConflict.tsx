// A delete refused because someone changed the test case or plan since the page read it.
import type { EditConflict } from "@testrun/gen/testrun/common/v1/errors_pb";
import { DialogActions } from "../../components/Dialog";
import { WhoSaved } from "./WhoSaved";

/**
 * A delete refused on an old version, inside the delete dialog: who changed it and when, that
 * nothing was deleted, and a way to the current version (`onLook`: read it again and close).
 */
export function DeleteConflict({
  conflict,
  onLook,
  onCancel,
}: {
  conflict: EditConflict;
  onLook: () => void;
  onCancel: () => void;
}) {
  return (
    <>
      <p className="notice notice-error" role="alert">
        <WhoSaved conflict={conflict} />; this page showed version {conflict.expectedVersion}. Nothing was
        deleted: look at the current version before deciding.
      </p>
      <DialogActions
        onCancel={onCancel}
        label="Look at the current version"
        busyLabel="Reading…"
        busy={false}
        onConfirm={onLook}
      />
    </>
  );
}
