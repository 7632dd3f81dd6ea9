// In an editor whose save was refused on an old version: who saved since, and the button that
// opens the conflict dialog again (EditConflictDialog.tsx).
import type { EditConflict } from "@testrun/gen/testrun/common/v1/errors_pb";
import { WhoSaved } from "./WhoSaved";

export function ConflictNotice({ conflict, onOpen }: { conflict: EditConflict; onOpen: () => void }) {
  return (
    <div className="notice notice-error conflict-notice" role="alert">
      <p>
        Not saved: <WhoSaved conflict={conflict} />; you started from version {conflict.expectedVersion}.
      </p>
      <button type="button" className="button button-small" onClick={onOpen}>
        Copy my changes or reload
      </button>
    </div>
  );
}
