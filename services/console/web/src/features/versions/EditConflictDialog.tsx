// When a save or delete is refused because someone else stored a newer version first (the
// catalog's ABORTED with an EditConflict detail; docs/console.md, "Two people editing"): who saved
// which version and when, and the ways on. Nothing of either person's text is lost: the stored
// version is theirs, and the draft stays in the editor until the person chooses to reload.
import type { EditConflict } from "@testrun/gen/testrun/common/v1/errors_pb";
import { useEffect, useId, useRef, useState } from "react";
import { messageOf } from "../../api";
import { Dialog, DialogActions } from "../../components/Dialog";
import { WhoSaved } from "./WhoSaved";

/**
 * A save refused on an old version: says so while `conflict` is set, and offers to copy the
 * person's changes (`mine`, as text), to reload the current version (`onReload`, which replaces
 * the draft; asked first unless the changes were copied), or to keep editing (`onClose`; the next
 * save is refused the same way until a reload).
 */
export function EditConflictDialog({
  conflict,
  what,
  mine,
  onReload,
  onClose,
}: {
  conflict: EditConflict | undefined;
  /** "test case", "test plan". */
  what: string;
  mine: string;
  onReload: () => Promise<void>;
  onClose: () => void;
}) {
  const ids = useId();
  const copyArea = useRef<HTMLTextAreaElement>(null);
  // Whether the changes are shown to copy, and whether the clipboard took them.
  const [copy, setCopy] = useState<"copied" | "by-hand">();
  const [confirming, setConfirming] = useState(false);
  const [reloading, setReloading] = useState(false);
  const [failed, setFailed] = useState<unknown>();
  // Each refusal starts afresh: the text to copy may have changed since the last one.
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when another refusal opens the dialog
  useEffect(() => {
    setCopy(undefined);
    setConfirming(false);
    setFailed(undefined);
  }, [conflict]);
  useEffect(() => {
    if (copy) copyArea.current?.select();
  }, [copy]);

  const copyMine = async () => {
    setConfirming(false);
    // The text is shown either way, so nothing depends on the clipboard being allowed (it exists
    // only in secure contexts, and a browser may refuse it).
    try {
      await navigator.clipboard.writeText(mine);
      setCopy("copied");
    } catch {
      setCopy("by-hand");
    }
  };
  const reload = async () => {
    if (copy !== "copied" && !confirming) {
      setConfirming(true);
      return;
    }
    setReloading(true);
    setFailed(undefined);
    try {
      await onReload();
    } catch (error) {
      setFailed(error);
    } finally {
      setReloading(false);
    }
  };
  const close = () => {
    if (!reloading) onClose();
  };

  return (
    <Dialog title={`Someone else saved this ${what}`} open={conflict !== undefined} onClose={close} wide>
      {conflict && (
        <div className="stack conflict-dialog">
          <p>
            <WhoSaved conflict={conflict} />; you started from version {conflict.expectedVersion}.{" "}
            <strong>Your changes are not saved.</strong>
          </p>
          <p className="muted small">
            Their version is stored as they saved it. Yours is still in the editor: copy it, reload the
            current version, and make your changes again there.
          </p>
          {copy && (
            <div className="field">
              <label htmlFor={`${ids}-mine`}>Your changes</label>
              <p className="muted small" id={`${ids}-said`} role="status">
                {copy === "copied"
                  ? "Copied to the clipboard. They are also here, to select and copy."
                  : "The browser did not let the console copy them: select the text and copy it."}
              </p>
              <textarea
                ref={copyArea}
                id={`${ids}-mine`}
                aria-describedby={`${ids}-said`}
                className="input input-code conflict-copy"
                readOnly
                rows={8}
                spellCheck={false}
                value={mine}
              />
            </div>
          )}
          {failed !== undefined && (
            <p className="notice notice-error" role="alert">
              The current version could not be read: {messageOf(failed)}
            </p>
          )}
          {confirming ? (
            <>
              <p className="notice notice-warning" role="alert">
                Reloading replaces your changes in the editor with version {conflict.currentVersion}.
                {copy === "by-hand" ? " Copy them from the box above first if you want them." : ""}
              </p>
              <DialogActions
                onCancel={() => setConfirming(false)}
                cancelLabel="Back"
                label="Discard my changes and reload"
                busyLabel="Reloading…"
                busy={reloading}
                danger
                onConfirm={() => void reload()}
              />
            </>
          ) : (
            <div className="dialog-actions conflict-actions">
              {/* Keeping the draft comes first: the first button has focus, and Enter must not lose it. */}
              <button type="button" className="button" onClick={close}>
                Keep editing
              </button>
              <button type="button" className="button" onClick={() => void copyMine()}>
                Copy my changes
              </button>
              <button
                type="button"
                className="button button-primary"
                disabled={reloading}
                aria-busy={reloading}
                onClick={() => void reload()}
              >
                {reloading ? "Reloading…" : "Reload the current version"}
              </button>
            </div>
          )}
        </div>
      )}
    </Dialog>
  );
}
